package io.estuary.testing.process;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Distinct free ports for servers a test starts in other processes. All sockets are held open until every port is
 * picked: ports asked for one by one, each socket closed at once, can come back twice, and a server given the same
 * port for two of its listeners never starts. Stateless.
 */
public final class FreePorts {
    private FreePorts() {}

    public static int[] take(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0);
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : held) s.close();
        }
    }
}
