package io.estuary.client.lifecycle;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
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
 * there every writer after a loss is a rerun, whatever attempt number it carries.
 *
 * <p>Stage attempts are ordered by (stage id, attempt): a later stage for the same shuffle (Spark makes one when a
 * new job needs a shuffle whose stage was cleaned up) counts as newer whatever its attempt number. A writer older
 * than the attempt that created the newest generation is a straggler of a stage that was rerun: it is refused with
 * {@link StatusCode#STALE_ATTEMPT}, since joining a newer attempt's generation could make its rows (which the engine
 * ignores, and which for an indeterminate stage differ from the rerun's) the ones readers read.
 *
 * <p>A shuffle's first generation may be declared before any writer asks ({@link #declare}), so that its slots are
 * registered while the engine is still scheduling its maps; readers do not see it until a writer claims it.
 * Thread-safe.
 */
final class ShuffleGenerations {
    private final AtomicInteger nextId = new AtomicInteger();
    private volatile boolean replaceLostOnAnyWriter;
    private final Map<Integer, List<ShuffleState>> byEngine = new ConcurrentHashMap<>();
    private final Map<Integer, ShuffleState> byId = new ConcurrentHashMap<>();

    /**
     * The generation a writer of stage {@code stageId}, attempt {@code stageAttempt} writes; a fresh one when the
     * rules above say so.
     *
     * @throws StatusException {@link StatusCode#STALE_ATTEMPT} for a writer older than the newest generation's
     */
    ShuffleState forWriter(
            int engineId, int stageId, int stageAttempt, boolean indeterminate, int numMappers, int numPartitions) {
        if (stageId < 0 || stageAttempt < 0) {
            throw new IllegalArgumentException("shuffle " + engineId + ": a writer of stage " + stageId + " attempt "
                    + stageAttempt + "; stage ids and attempts are not negative");
        }
        List<ShuffleState> gens = byEngine.computeIfAbsent(engineId, k -> new ArrayList<>());
        synchronized (gens) {
            ShuffleState cur = gens.isEmpty() ? null : gens.get(gens.size() - 1);
            if (cur != null && !cur.claimed()) {
                if (cur.numMappers != numMappers || cur.numPartitions != numPartitions) {
                    throw new IllegalArgumentException("shuffle " + engineId + " was declared with " + cur.numMappers
                            + " maps and " + cur.numPartitions + " partitions; a writer of stage " + stageId
                            + " names " + numMappers + " and " + numPartitions);
                }
                cur.claim(stageId, stageAttempt);
                return cur;
            }
            int order = cur == null ? 1 : compare(stageId, stageAttempt, cur);
            if (order < 0) {
                throw new StatusException(
                        StatusCode.STALE_ATTEMPT,
                        "stage " + stageId + " attempt " + stageAttempt
                                + " of shuffle " + engineId + " is older than stage " + cur.stageId + " attempt "
                                + cur.stageAttempt
                                + ", which writes its newest generation " + cur.shuffleId
                                + ": this task's output is not needed");
            }
            boolean fresh = cur == null
                    || (order > 0 && (cur.lost() || indeterminate))
                    || (replaceLostOnAnyWriter && cur.lost());
            if (!fresh) return cur;
            ShuffleState s = new ShuffleState(
                    nextId.getAndIncrement(), engineId, stageId, stageAttempt, numMappers, numPartitions);
            byId.put(s.shuffleId, s);
            gens.add(s);
            return s;
        }
    }

    /**
     * A first generation for a shuffle the engine has just declared, before any writer asks (so that its registration
     * runs while the engine schedules the maps); its first writer claims it, whatever its stage attempt. Null when the
     * shuffle already has a generation.
     */
    ShuffleState declare(int engineId, int numMappers, int numPartitions) {
        List<ShuffleState> gens = byEngine.computeIfAbsent(engineId, k -> new ArrayList<>());
        synchronized (gens) {
            if (!gens.isEmpty()) return null;
            ShuffleState s = ShuffleState.unclaimed(nextId.getAndIncrement(), engineId, numMappers, numPartitions);
            byId.put(s.shuffleId, s);
            gens.add(s);
            return s;
        }
    }

    /**
     * Refuses a writer of an older stage attempt than the one that created the newest generation of its engine
     * shuffle, when it ends a map in {@code gen}, a generation since superseded (lost and written again). A straggler
     * that took its locations before the loss would otherwise end a map the engine may count as done, in a generation
     * nobody reads, while the newest one waits for that map for ever.
     *
     * @throws StatusException {@link StatusCode#STALE_ATTEMPT} for such a writer
     */
    void checkNotSuperseded(ShuffleState gen, int stageId, int stageAttempt) {
        List<ShuffleState> gens = byEngine.get(gen.engineShuffleId);
        if (gens == null) return;
        synchronized (gens) {
            ShuffleState cur = gens.isEmpty() ? null : gens.get(gens.size() - 1);
            if (cur == null || cur == gen || !cur.claimed() || compare(stageId, stageAttempt, cur) >= 0) return;
            throw new StatusException(
                    StatusCode.STALE_ATTEMPT,
                    "stage " + stageId + " attempt " + stageAttempt
                            + " ended a map in generation " + gen.shuffleId + " of shuffle " + gen.engineShuffleId
                            + ", superseded by "
                            + "generation " + cur.shuffleId + " of stage " + cur.stageId + " attempt "
                            + cur.stageAttempt
                            + ": this task's output is not needed");
        }
    }

    /** Orders a writer's stage attempt against the one that created {@code gen}. */
    private static int compare(int stageId, int stageAttempt, ShuffleState gen) {
        int c = Integer.compare(stageId, gen.stageId);
        return c != 0 ? c : Integer.compare(stageAttempt, gen.stageAttempt);
    }

    /** From now on any writer of a lost generation's engine shuffle starts a fresh generation. */
    void replaceLostOnAnyWriter() {
        replaceLostOnAnyWriter = true;
    }

    /** The newest generation a writer claimed, or null when no writer ever asked. */
    ShuffleState newest(int engineId) {
        List<ShuffleState> gens = byEngine.get(engineId);
        if (gens == null) return null;
        synchronized (gens) {
            ShuffleState cur = gens.isEmpty() ? null : gens.get(gens.size() - 1);
            return cur == null || !cur.claimed() ? null : cur;
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
