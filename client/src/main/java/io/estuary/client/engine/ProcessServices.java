package io.estuary.client.engine;

import io.estuary.client.ShuffleServices;
import java.util.function.Supplier;

/**
 * The process's one {@link ShuffleServices}, for engines whose plugins are created per task and hold nothing for
 * the life of the process themselves (MapReduce: a collector per map, a shuffle consumer per reduce, several at
 * once under LocalJobRunner). The first caller creates it, so the first caller's configuration serves the whole
 * process. Tasks take the client with {@link ShuffleServices#leaseClient()} and give it back when they end, so no
 * connection or thread outlives them. Thread-safe.
 */
public final class ProcessServices {
    private static ShuffleServices services;

    private ProcessServices() {}

    /** The process's services, made by {@code create} on the first call (later callers' {@code create} is unused). */
    public static synchronized ShuffleServices get(Supplier<ShuffleServices> create) {
        if (services == null) services = create.get();
        return services;
    }
}
