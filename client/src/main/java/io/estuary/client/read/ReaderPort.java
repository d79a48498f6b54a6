package io.estuary.client.read;

import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.time.Clock;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;

/**
 * What a {@link ShuffleBatchReader} needs from the process it runs in: where the driver committed the partitions,
 * connections to workers, and the clock. The process's shuffle client implements it; the reader knows nothing else
 * of it. Implementations are thread-safe.
 */
public interface ReaderPort {
    EstuaryConf conf();

    Clock clock();

    /**
     * Where partitions [start, end) of the newest generation were committed, which attempt of each map counts, and
     * what maps [startMap, endMap) wrote to each partition; waits for the commit.
     */
    GetReducerFileGroupResponse reducerFiles(
            ShuffleSpec spec, int startPartition, int endPartition, int startMap, int endMap) throws RemoteException;

    /** A reader found the files of {@code spec} unreadable: what was kept of where they are is dropped. */
    default void fileGroupUnreadable(ShuffleSpec spec) {}

    /** The connection to a worker's fetch port, proving application {@code appId}'s credentials. */
    TransportClient fetchClient(String appId, WorkerAddress worker) throws RemoteException;
}
