package io.estuary.network.rpc;

/**
 * The answer of a master that is not the leader: a failure whose message starts with a fixed marker and names the
 * leader's RPC endpoint when one is known, so {@link MasterClient} can go there directly.
 */
public final class NotLeader {
  private NotLeader() {}

  static final String MARKER = "NOT_LEADER";
  private static final String LEADER_IS = "; leader: ";

  public static String message(String leaderEndpoint) {
    return MARKER + ": this master is not the leader" + (leaderEndpoint == null ? "; no leader is elected yet"
        : LEADER_IS + leaderEndpoint);
  }

  static boolean is(String message) {
    return message != null && message.contains(MARKER);
  }

  /** The leader named in a not-leader message, or null. */
  static String leader(String message) {
    int i = message.indexOf(LEADER_IS);
    if (i < 0) return null;
    String rest = message.substring(i + LEADER_IS.length()).trim();
    int end = 0;
    while (end < rest.length() && !Character.isWhitespace(rest.charAt(end)) && rest.charAt(end) != ')') end++;
    return rest.substring(0, end);
  }
}
