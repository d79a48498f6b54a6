package io.estuary.network.server;

import io.estuary.network.auth.Identity;

/**
 * How the names a peer claims appear in the server's logs and refusals: control characters replaced, so that a
 * name cannot forge log lines. Stateless.
 */
final class PeerNames {
    private PeerNames() {}

    /** A peer's name as logs and messages show it: control characters replaced by '?'. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            b.append(Character.isISOControl(c) ? '?' : c);
        }
        return b.toString();
    }

    /** Why an identity whose secret the server cannot find is refused. */
    static String unknown(Identity id) {
        if (id.isApplication()) {
            return "unknown application " + printable(id.appId()) + ": never registered, or expired";
        }
        return "this server knows no secret for " + printable(id.name());
    }
}
