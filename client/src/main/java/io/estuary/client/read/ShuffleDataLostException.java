package io.estuary.client.read;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;

/**
 * Some of a shuffle's data cannot be read from any copy, or what was read does not add up to what the maps wrote.
 * Engines answer it by rerunning the maps (Spark: a fetch failure), after telling the driver with
 * {@link io.estuary.client.ShuffleClient#reportFetchFailure} so that the rerun writes a fresh generation.
 */
public final class ShuffleDataLostException extends StatusException {
    private final int engineShuffleId;
    private final int estuaryShuffleId;
    private final int partition;
    private final int epoch;

    public ShuffleDataLostException(
            int engineShuffleId, int estuaryShuffleId, int partition, int epoch, String message, Throwable cause) {
        super(StatusCode.SHUFFLE_DATA_LOST, message, cause);
        this.engineShuffleId = engineShuffleId;
        this.estuaryShuffleId = estuaryShuffleId;
        this.partition = partition;
        this.epoch = epoch;
    }

    public int engineShuffleId() {
        return engineShuffleId;
    }

    /** The generation that was being read, or -1 when the driver already knew it was lost. */
    public int estuaryShuffleId() {
        return estuaryShuffleId;
    }

    /** The partition that could not be read, or -1. */
    public int partition() {
        return partition;
    }

    public int epoch() {
        return epoch;
    }
}
