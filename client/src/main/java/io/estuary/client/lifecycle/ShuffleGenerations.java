package io.estuary.client.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Maps each engine shuffle to its generations (Estuary shuffles). Writers of a stage attempt get the newest
 * generation, or a fresh one when the newest was lost (a reader could not read it) or when an indeterminate stage
 * reruns; readers always read the newest. A rerun so never mixes its output with the lost one's. Engines without
 * stage attempts (MapReduce, whose maps all end before any reader starts) turn on {@link #replaceLostOnAnyWriter}:
 * there every writer after a loss is a rerun, whatever attempt number it carries. Thread-safe.
 */
final class ShuffleGenerations {
  private final AtomicInteger nextId = new AtomicInteger();
  private volatile boolean replaceLostOnAnyWriter;
  private final Map<Integer, List<ShuffleState>> byEngine = new ConcurrentHashMap<>();
  private final Map<Integer, ShuffleState> byId = new ConcurrentHashMap<>();

  /** The generation a writer of {@code stageAttempt} writes; a fresh one when the rules above say so. */
  ShuffleState forWriter(int engineId, int stageAttempt, boolean indeterminate, int numMappers, int numPartitions) {
    List<ShuffleState> gens = byEngine.computeIfAbsent(engineId, k -> new ArrayList<>());
    synchronized (gens) {
      ShuffleState cur = gens.isEmpty() ? null : gens.get(gens.size() - 1);
      boolean fresh = cur == null
          || (stageAttempt > cur.stageAttempt && (cur.lost() || indeterminate))
          || (replaceLostOnAnyWriter && cur.lost());
      if (!fresh) return cur;
      ShuffleState s = new ShuffleState(nextId.getAndIncrement(), engineId, stageAttempt, numMappers, numPartitions);
      byId.put(s.shuffleId, s);
      gens.add(s);
      return s;
    }
  }

  /** From now on any writer of a lost generation's engine shuffle starts a fresh generation. */
  void replaceLostOnAnyWriter() {
    replaceLostOnAnyWriter = true;
  }

  /** The newest generation, or null when no writer ever asked. */
  ShuffleState newest(int engineId) {
    List<ShuffleState> gens = byEngine.get(engineId);
    if (gens == null) return null;
    synchronized (gens) {
      return gens.isEmpty() ? null : gens.get(gens.size() - 1);
    }
  }

  ShuffleState byId(int shuffleId) {
    return byId.get(shuffleId);
  }

  /** Forgets every generation of an engine shuffle and returns them. */
  List<ShuffleState> remove(int engineId) {
    List<ShuffleState> gens = byEngine.remove(engineId);
    if (gens == null) return new ArrayList<>();
    synchronized (gens) {
      for (ShuffleState s : gens) byId.remove(s.shuffleId);
      return new ArrayList<>(gens);
    }
  }
}
