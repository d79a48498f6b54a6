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
  final int shuffleId;          // the Estuary shuffle id of this generation
  final int engineShuffleId;
  final int stageId;            // the engine's stage (Spark: a new stage for the same shuffle has a higher id)
  final int stageAttempt;       // with stageId: the writing stage attempt that created this generation
  final int numMappers;
  final int numPartitions;
  /** Set by the first registration; null while no map has pushed anything. Completes with the epoch table. */
  CompletableFuture<EpochTable> slots;
  /** For each map, the attempt that ended first, or -1. */
  private final int[] mapAttempts;
  /** For each map, what its winning attempt wrote: partition ids with batches, records and checksum. */
  private final PartitionStats[][] mapStats;
  private int endedMaps;
  /** Batches, records and checksum per partition over all maps, once every map ended. */
  private long[][] totals;
  /** Completes with every partition's committed files once all maps ended and the workers committed. */
  final CompletableFuture<List<PartitionFiles.Builder>> commit = new CompletableFuture<>();
  private boolean commitStarted;
  /** A reader could not read this generation: readers are refused and writers of a later attempt start anew. */
  private volatile boolean lost;

  ShuffleState(int shuffleId, int engineShuffleId, int stageId, int stageAttempt, int numMappers,
      int numPartitions) {
    this.shuffleId = shuffleId;
    this.engineShuffleId = engineShuffleId;
    this.stageId = stageId;
    this.stageAttempt = stageAttempt;
    this.numMappers = numMappers;
    this.numPartitions = numPartitions;
    this.mapAttempts = new int[numMappers];
    this.mapStats = new PartitionStats[numMappers][];
    Arrays.fill(mapAttempts, -1);
  }

  /** Records an ended attempt and what it wrote; returns the attempt that counts for this map. */
  synchronized int mapEnded(int mapId, int attemptId, List<PartitionStats> stats) {
    if (mapAttempts[mapId] < 0) {
      mapAttempts[mapId] = attemptId;
      mapStats[mapId] = stats.toArray(new PartitionStats[0]);
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
   * Adds to {@code files} (partitions [start, start + files.length)) what the winning attempts of maps
   * [startMap, endMap) wrote to each.
   */
  synchronized void addExpected(PartitionFiles.Builder[] files, int start, int startMap, int endMap) {
    int end = start + files.length;
    if (startMap <= 0 && endMap >= numMappers && commitStarted) {
      // Every map ended, so the totals are final: summed once, not once per reducer.
      if (totals == null) {
        totals = new long[3][numPartitions];
        for (PartitionStats[] stats : mapStats) {
          if (stats == null) continue;
          for (PartitionStats st : stats) {
            totals[0][st.getPartitionId()] += st.getBatches();
            totals[1][st.getPartitionId()] += st.getRecords();
            totals[2][st.getPartitionId()] += st.getChecksum();
          }
        }
      }
      for (int p = start; p < end; p++) {
        files[p - start].setExpectedBatches(totals[0][p]).setExpectedRecords(totals[1][p])
            .setExpectedChecksum(totals[2][p]);
      }
      return;
    }
    for (int m = Math.max(0, startMap); m < Math.min(endMap, numMappers); m++) {
      if (mapStats[m] == null) continue;
      for (PartitionStats s : mapStats[m]) {
        int p = s.getPartitionId();
        if (p < start || p >= end) continue;
        PartitionFiles.Builder f = files[p - start];
        f.setExpectedBatches(f.getExpectedBatches() + s.getBatches())
            .setExpectedRecords(f.getExpectedRecords() + s.getRecords())
            .setExpectedChecksum(f.getExpectedChecksum() + s.getChecksum());
      }
    }
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
