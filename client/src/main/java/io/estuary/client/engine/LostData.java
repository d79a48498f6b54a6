package io.estuary.client.engine;

import io.estuary.client.ShuffleClient;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.network.client.RemoteException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the shuffle's lifecycle manager that a reader found data lost, before the engine hears of it: the lifecycle
 * drops the lost generation and runs the engine's loss hooks, so the maps the engine reruns write a fresh one.
 * Stateless: static functions only, safe from any thread.
 */
public final class LostData {
    private static final Logger LOG = LoggerFactory.getLogger(LostData.class);

    private LostData() {}

    /**
     * Reports {@code lost} to the lifecycle manager of {@code spec}. Never throws: the engine's own failure (fetch
     * failure, failed attempt) follows either way, and a report that does not arrive only costs a later attempt.
     * Loss that names no Estuary shuffle (it was never resolved) has nothing to report.
     */
    public static void report(ShuffleClient client, ShuffleSpec spec, ShuffleDataLostException lost) {
        if (lost.estuaryShuffleId() < 0) return;
        try {
            client.reportFetchFailure(spec, lost.estuaryShuffleId(), lost.getMessage());
        } catch (RemoteException | RuntimeException e) {
            LOG.warn("Telling the lifecycle manager about lost shuffle data failed: {}", e.getMessage());
        }
    }
}
