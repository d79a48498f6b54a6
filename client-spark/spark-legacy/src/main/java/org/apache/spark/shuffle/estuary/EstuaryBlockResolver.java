package org.apache.spark.shuffle.estuary;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.storage.ShuffleBlockId;

/**
 * Estuary's data lives on Estuary workers, never in Spark's block manager: any lookup there is a bug to report.
 * Stateless, so safe from any thread.
 */
final class EstuaryBlockResolver implements ShuffleBlockResolver {
    @Override
    public ManagedBuffer getBlockData(ShuffleBlockId blockId) {
        throw new UnsupportedOperationException("Estuary shuffle data is served by Estuary workers, not by Spark's "
                + "block manager; " + blockId + " was asked for there. Is a component bypassing the shuffle manager?");
    }

    @Override
    public void stop() {}
}
