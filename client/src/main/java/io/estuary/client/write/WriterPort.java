package io.estuary.client.write;

import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.PartitionStats;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.time.Clock;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a {@link MapOutputWriter} needs from the process it runs in: the driver (registration, revives, the end of a
 * map), connections to workers, a timer for retries, and the clock. The process's shuffle client implements it; the
 * writer knows nothing else of it. Implementations are thread-safe.
 */
public interface WriterPort {
    EstuaryConf conf();

    Clock clock();

    /** The locations writers of this stage attempt write to; asks the driver once per process and stage attempt. */
    LocationTable register(ShuffleSpec spec, int stageId, int stageAttempt, boolean indeterminate);

    /** A new location for a partition whose location at {@code failedEpoch} failed or split. */
    CompletableFuture<PartitionLocation> revive(
            ShuffleSpec spec,
            LocationTable table,
            int partition,
            int failedEpoch,
            WorkerAddress failedWorker,
            boolean split);

    /** Reports a finished map attempt; returns the attempt that counts for this map. */
    int mapperEnd(
            ShuffleSpec spec,
            LocationTable table,
            int stageId,
            int stageAttempt,
            boolean indeterminate,
            int mapId,
            int attemptId,
            List<PartitionStats> stats)
            throws RemoteException;

    /** The connection to a worker's push port, proving application {@code appId}'s credentials. */
    TransportClient pushClient(String appId, WorkerAddress worker) throws RemoteException;

    /**
     * Runs {@code retry} after {@code delayMs}, or, if the port closes first, {@code dropped} instead: exactly one of
     * the two runs.
     */
    void retryTimerSchedule(Runnable retry, long delayMs, Runnable dropped);
}
