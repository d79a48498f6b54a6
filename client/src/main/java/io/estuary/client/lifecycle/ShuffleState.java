package io.estuary.client.lifecycle;

import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionStats;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The driver's view of one generation of an engine shuffle (one Estuary shuffle): its locations, which map attempts
 * ended and what each wrote, and the outcome of its commit. Fields without a lock note are guarded by this object.
 */
final class ShuffleState {
    final int shuffleId; // the Estuary shuffle id of this generation
    final int engineShuffleId;
    final int stageId; // the engine's stage (Spark: a new stage for the same shuffle has a higher id)
    final int stageAttempt; // with stageId: the writing stage attempt that created this generation
    final int numMappers;
    final int numPartitions;
    /** Set by the first registration; null while no map has pushed anything. Completes with the epoch table. */
    CompletableFuture<EpochTable> slots;
    /** For each map, the attempt that ended first, or -1. */
    private final int[] mapAttempts;
    /** What the winning attempts wrote, summed per partition as maps end. */
    private final WrittenCounts written;

    private int endedMaps;
    /** Completes with every partition's committed files once all maps ended and the workers committed. */
    final CompletableFuture<List<PartitionFiles.Builder>> commit = new CompletableFuture<>();

    private boolean commitStarted;
    /** A reader could not read this generation: readers are refused and writers of a later attempt start anew. */
    private volatile boolean lost;

    ShuffleState(int shuffleId, int engineShuffleId, int stageId, int stageAttempt, int numMappers, int numPartitions) {
        this.shuffleId = shuffleId;
        this.engineShuffleId = engineShuffleId;
        this.stageId = stageId;
        this.stageAttempt = stageAttempt;
        this.numMappers = numMappers;
        this.numPartitions = numPartitions;
        this.mapAttempts = new int[numMappers];
        this.written = new WrittenCounts(numMappers, numPartitions);
        Arrays.fill(mapAttempts, -1);
    }

    /**
     * Records an ended attempt and what it wrote (partition ids in range, counts not negative: the caller checked);
     * returns the attempt that counts for this map.
     */
    synchronized int mapEnded(int mapId, int attemptId, List<PartitionStats> stats) {
        if (mapAttempts[mapId] < 0) {
            mapAttempts[mapId] = attemptId;
            written.add(mapId, stats);
            endedMaps++;
        }
        return mapAttempts[mapId];
    }

    /** True exactly once: when the last map ended and the commit should start. */
    synchronized boolean shouldStartCommit() {
        if (commitStarted || endedMaps < numMappers) return false;
        commitStarted = true;
        return true;
    }

    synchronized boolean commitStarted() {
        return commitStarted;
    }

    synchronized int[] mapAttemptsCopy() {
        return mapAttempts.clone();
    }

    /**
     * Sets on {@code files} (partitions [start, start + files.length)) what the winning attempts of maps
     * [startMap, endMap) wrote to each; returns false when that is the batch count alone (a part of the maps).
     */
    synchronized boolean setExpected(PartitionFiles.Builder[] files, int start, int startMap, int endMap) {
        if (startMap <= 0 && endMap >= numMappers) {
            written.setTotals(files, start);
            return true;
        }
        written.setBatches(files, start, startMap, endMap);
        return false;
    }

    /** Heap bytes of what the attempts wrote (for tests: it must stay small for the largest shuffles). */
    synchronized long writtenCountsBytes() {
        return written.retainedBytes();
    }

    boolean lost() {
        return lost;
    }

    /** Marks the generation lost; true the first time. */
    synchronized boolean markLost() {
        if (lost) return false;
        lost = true;
        return true;
    }

    @Override
    public String toString() {
        return "shuffle " + engineShuffleId + " (generation " + shuffleId + ")";
    }
}
