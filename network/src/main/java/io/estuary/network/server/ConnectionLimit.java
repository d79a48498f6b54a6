package io.estuary.network.server;

import io.estuary.common.config.NetworkConfig;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many connections one server holds, against its cap ({@code estuary.network.server.maxConnections}). A
 * connection takes a place when it opens and gives it back when it closes; one that finds no place is refused.
 * Thread-safe (event loops of every connection share it).
 */
final class ConnectionLimit {
    private final String serverName;
    private final int max;
    private final AtomicInteger open = new AtomicInteger();

    ConnectionLimit(String serverName, int max) {
        this.serverName = serverName;
        this.max = max;
    }

    /** Takes a place; false (taking none) when the server is full. */
    boolean tryAcquire() {
        while (true) {
            int n = open.get();
            if (n >= max) return false;
            if (open.compareAndSet(n, n + 1)) return true;
        }
    }

    void release() {
        open.decrementAndGet();
    }

    int open() {
        return open.get();
    }

    /** What a refused peer is told. */
    String refusal() {
        return serverName + " already holds " + max + " connections, the most " + NetworkConfig.MAX_CONNECTIONS.key()
                + " allows; try again later";
    }
}
