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
    /**
     * The engine's stage (Spark: a new stage for the same shuffle has a higher id) and, with it, the writing stage
     * attempt that created this generation; both -1 for a generation registered when the engine declared the shuffle,
     * until its first writer claims it ({@link #claim}). Guarded by the generation list's lock
     * ({@link ShuffleGenerations}).
     */
    int stageId;

    int stageAttempt;
    final int numMappers;
    final int numPartitions;
    /** Set by the first registration; null while no map has pushed anything. Completes with the epoch table. */
    CompletableFuture<EpochTable> slots;
    /** Whether a thread took up the registration {@link #slots} stands for (it may be queued on two executors). */
    java.util.concurrent.atomic.AtomicBoolean registrationTaken;
    /** Whether {@link #slots} stands for a registration queued at the shuffle's declaration, not yet taken over. */
    boolean registrationAhead;
    /**
     * Placed by a slot lease: completes once the master recorded the placement (its unregistration goes after it);
     * null when the master placed it.
     */
    volatile CompletableFuture<Void> recorded;
    /** The engine forgot the shuffle: a registration not yet started never starts. */
    volatile boolean forgotten;
    /**
     * When the master first told this shuffle to wait for admission under a quota (System.nanoTime), 0 while it is
     * not waiting: each ask says how long it has waited, so the master ends the wait its quota allows.
     */
    volatile long admissionWaitSince;
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

    /** A generation no writer has claimed yet: registered ahead, when the engine declared its shuffle. */
    static ShuffleState unclaimed(int shuffleId, int engineShuffleId, int numMappers, int numPartitions) {
        return new ShuffleState(shuffleId, engineShuffleId, UNCLAIMED, UNCLAIMED, numMappers, numPartitions);
    }

    private static final int UNCLAIMED = -1;

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

    /** False for a generation registered ahead that no writer has claimed yet. Under the generation list's lock. */
    boolean claimed() {
        return stageId != UNCLAIMED;
    }

    /** The first writer's stage attempt becomes the one that created this generation. Under the list's lock. */
    void claim(int stageId, int stageAttempt) {
        if (claimed()) throw new IllegalStateException(this + " was claimed by stage " + this.stageId);
        if (stageId < 0 || stageAttempt < 0) {
            throw new IllegalArgumentException(
                    "stage " + stageId + " attempt " + stageAttempt + " cannot write " + this);
        }
        this.stageId = stageId;
        this.stageAttempt = stageAttempt;
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
