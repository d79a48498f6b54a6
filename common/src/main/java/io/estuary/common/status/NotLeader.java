package io.estuary.common.status;

/**
 * The answer of a master that is not the leader: status {@link StatusCode#NOT_LEADER} with, as its whole message,
 * the leader's RPC endpoint (empty while no leader is known), so a master client can go there directly without
 * reading prose. Lives beside {@link StatusCode} because both the master's state log and the RPC layer speak it.
 */
public final class NotLeader {
    private NotLeader() {}

    public static StatusException exception(String leaderEndpoint) {
        return new StatusException(StatusCode.NOT_LEADER, leaderEndpoint == null ? "" : leaderEndpoint);
    }

    /** The leader named by a NOT_LEADER failure, or null. */
    public static String leader(String failureMessage) {
        return failureMessage == null || failureMessage.isEmpty() ? null : failureMessage;
    }

    /** For people: what a NOT_LEADER answer from {@code endpoint} meant. */
    public static String describe(String endpoint, String failureMessage) {
        String leader = leader(failureMessage);
        return endpoint + " is not the leader"
                + (leader == null ? " and knows no leader yet" : "; the leader is " + leader);
    }
}
