package io.estuary.network.rpc;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;

/**
 * The answer of a master that is not the leader: status {@link StatusCode#NOT_LEADER} with, as its whole message,
 * the leader's RPC endpoint (empty while no leader is known), so {@link MasterClient} can go there directly without
 * reading prose.
 */
public final class NotLeader {
  private NotLeader() {}

  public static StatusException exception(String leaderEndpoint) {
    return new StatusException(StatusCode.NOT_LEADER, leaderEndpoint == null ? "" : leaderEndpoint);
  }

  /** The leader named by a NOT_LEADER failure, or null. */
  static String leader(String failureMessage) {
    return failureMessage == null || failureMessage.isEmpty() ? null : failureMessage;
  }

  /** For people: what a NOT_LEADER answer from {@code endpoint} meant. */
  static String describe(String endpoint, String failureMessage) {
    String leader = leader(failureMessage);
    return endpoint + " is not the leader" + (leader == null ? " and knows no leader yet" : "; the leader is " + leader);
  }
}
