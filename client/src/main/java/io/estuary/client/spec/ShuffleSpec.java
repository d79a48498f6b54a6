package io.estuary.client.spec;

import java.io.Serializable;

/**
 * What every task needs to know about one shuffle: whose it is, its size, and where the driver's lifecycle
 * manager listens. Engines ship it to tasks inside their shuffle handle.
 */
public final class ShuffleSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    public final String appId;
    public final int shuffleId;
    public final int numMappers;
    public final int numPartitions;
    public final String driverHost;
    public final int driverPort;

    public ShuffleSpec(
            String appId, int shuffleId, int numMappers, int numPartitions, String driverHost, int driverPort) {
        this.appId = appId;
        this.shuffleId = shuffleId;
        this.numMappers = numMappers;
        this.numPartitions = numPartitions;
        this.driverHost = driverHost;
        this.driverPort = driverPort;
    }

    @Override
    public String toString() {
        return "shuffle " + shuffleId + " of " + appId + " (" + numMappers + " maps, " + numPartitions + " partitions)";
    }
}
