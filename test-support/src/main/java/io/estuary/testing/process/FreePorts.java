package io.estuary.testing.process;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Distinct free ports for servers a test starts in other processes. All sockets are held open until every port is
 * picked: ports asked for one by one, each socket closed at once, can come back twice, and a server given the same
 * port for two of its listeners never starts.
 *
 * <p>The ports are chosen below the kernel's ephemeral range when it is known (Linux): a port the kernel handed out
 * for {@code bind(0)} is also one it may hand to any outgoing connection in the moment before the server binds it (a
 * master failed to start with "Address already in use" that way), while a port below that range is never given to a
 * connection. Elsewhere, the kernel's own choice. A port handed out is not handed out again by this JVM until 4,096
 * others have been, so callers that take one port at a time do not get the same one twice. Thread-safe.
 */
public final class FreePorts {
    private static final int LOWEST = 10_000;
    private static final int REMEMBERED = 4096;
    /** Ports handed out lately, oldest first; guarded by itself. */
    private static final java.util.LinkedHashSet<Integer> HANDED = new java.util.LinkedHashSet<>();

    private FreePorts() {}

    public static int[] take(int n) throws IOException {
        int top = ephemeralLow();
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            Set<Integer> tried = new HashSet<>();
            for (int i = 0; i < n; i++) {
                ServerSocket s = null;
                while (s == null && top - LOWEST > 1000 && tried.size() < 2000) {
                    int p = ThreadLocalRandom.current().nextInt(LOWEST, top);
                    if (!tried.add(p) || handedLately(p)) continue;
                    try {
                        s = new ServerSocket(p);
                    } catch (IOException taken) {
                        // in use: try another
                    }
                }
                if (s == null) s = new ServerSocket(0);
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            remember(ports);
            return ports;
        } finally {
            for (ServerSocket s : held) s.close();
        }
    }

    private static boolean handedLately(int port) {
        synchronized (HANDED) {
            return HANDED.contains(port);
        }
    }

    private static void remember(int[] ports) {
        synchronized (HANDED) {
            for (int p : ports) {
                HANDED.remove(p);
                HANDED.add(p);
            }
            java.util.Iterator<Integer> oldest = HANDED.iterator();
            while (HANDED.size() > REMEMBERED) {
                oldest.next();
                oldest.remove();
            }
        }
    }

    /** The lowest port the kernel hands to connections, or 0 when unknown (then no range is avoided). */
    private static int ephemeralLow() {
        Path range = Paths.get("/proc/sys/net/ipv4/ip_local_port_range");
        // Read as a stream: a /proc file reports a size that need not be its length.
        try (java.io.BufferedReader r = Files.newBufferedReader(range, StandardCharsets.US_ASCII)) {
            String line = r.readLine();
            return line == null ? 0 : Integer.parseInt(line.trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
