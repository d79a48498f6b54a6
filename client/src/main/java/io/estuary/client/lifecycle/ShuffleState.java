package io.estuary.client.lifecycle;

import io.estuary.common.protocol.PartitionLocation;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The driver's view of one shuffle: its slots, which map attempts ended, and the outcome of its commit. */
final class ShuffleState {
  final int shuffleId;
  final int numMappers;
  final int numPartitions;
  /** Set by the first registration; null while no map has pushed anything. */
  CompletableFuture<List<PartitionLocation>> slots;
  /** For each map, the attempt that ended first, or -1. */
  final int[] mapAttempts;
  int endedMaps;
  /** Completes with the committed size of every partition once all maps ended and the workers committed. */
  final CompletableFuture<long[]> commit = new CompletableFuture<>();
  boolean commitStarted;

  ShuffleState(int shuffleId, int numMappers, int numPartitions) {
    this.shuffleId = shuffleId;
    this.numMappers = numMappers;
    this.numPartitions = numPartitions;
    this.mapAttempts = new int[numMappers];
    Arrays.fill(mapAttempts, -1);
  }

  /** Records an ended attempt; returns the attempt that counts for this map. */
  synchronized int mapEnded(int mapId, int attemptId) {
    if (mapAttempts[mapId] < 0) {
      mapAttempts[mapId] = attemptId;
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

  synchronized int[] mapAttemptsCopy() {
    return mapAttempts.clone();
  }
}
