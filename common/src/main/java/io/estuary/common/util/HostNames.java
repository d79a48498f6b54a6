package io.estuary.common.util;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Resolves the host a server advertises when none is configured. */
public final class HostNames {
    private HostNames() {}

    public static String orLocalHost(String configured) {
        if (configured != null && !configured.isEmpty()) return configured;
        try {
            return InetAddress.getLocalHost().getCanonicalHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    /** Splits {@code host:port}. */
    public static String host(String endpoint) {
        return endpoint.substring(0, endpoint.lastIndexOf(':'));
    }

    public static int port(String endpoint) {
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }
}
