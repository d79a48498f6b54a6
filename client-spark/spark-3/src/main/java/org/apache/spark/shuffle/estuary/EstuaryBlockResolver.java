package org.apache.spark.shuffle.estuary;

import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.MergedBlockMeta;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleMergedBlockId;
import scala.Option;
import scala.collection.immutable.Seq;

/** Estuary's data lives on Estuary workers, never in Spark's block manager: any lookup there is a bug to report. */
final class EstuaryBlockResolver implements ShuffleBlockResolver {
    private static UnsupportedOperationException notHere(Object block) {
        return new UnsupportedOperationException("Estuary shuffle data is served by Estuary workers, not by Spark's "
                + "block manager; " + block + " was asked for there. Is a component bypassing the shuffle manager?");
    }

    @Override
    public ManagedBuffer getBlockData(BlockId blockId, Option<String[]> dirs) {
        throw notHere(blockId);
    }

    // immutable.Seq: Scala 2.13's Seq; on 2.12 a subtype of the declared collection.Seq, so one source serves both.
    @Override
    public Seq<ManagedBuffer> getMergedBlockData(ShuffleMergedBlockId blockId, Option<String[]> dirs) {
        throw notHere(blockId);
    }

    @Override
    public MergedBlockMeta getMergedBlockMeta(ShuffleMergedBlockId blockId, Option<String[]> dirs) {
        throw notHere(blockId);
    }

    @Override
    public void stop() {}
}
