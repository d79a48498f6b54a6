package io.estuary.master.state;

import java.util.Map;
import java.util.TreeMap;

/**
 * The shuffle ids one application unregistered, as ranges of consecutive ids: an application that unregisters shuffle
 * after shuffle (ids grow, Spark never reuses one) is one range however many it ran, and a shuffle still live among
 * them splits a range in two. At most {@code maxRanges} ranges are kept; past that the lowest (oldest) range is
 * dropped, and its shuffles are then unknown to the master (see the leader's UnknownShuffles). Holds only ids that
 * were unregistered, never a guess, so a worker told from here to delete a shuffle never loses live data.
 * Deterministic (no clocks, ordered maps) for the replicated state. Not thread-safe: the state machine's lock guards
 * it.
 */
final class ShuffleIdRanges {
    /** First id of each range to its last id (inclusive). Ranges never touch: adjacent ones are merged. */
    private final TreeMap<Integer, Integer> ranges = new TreeMap<>();

    /** Adds one id, merging it with the ranges it touches; then drops the lowest ranges beyond {@code maxRanges}. */
    void add(int id, int maxRanges) {
        addRange(id, id);
        while (ranges.size() > maxRanges) ranges.pollFirstEntry();
    }

    /** Adds {@code first..last} as restored from a snapshot (no bound: the snapshot was bounded when written). */
    void addRange(int first, int last) {
        Map.Entry<Integer, Integer> below = ranges.floorEntry(first);
        if (below != null && below.getValue() >= first - 1L) {
            first = below.getKey();
            last = Math.max(last, below.getValue());
        }
        // Every range starting inside (or just after) the new one is absorbed.
        Map.Entry<Integer, Integer> above = ranges.ceilingEntry(first);
        while (above != null && above.getKey() <= last + 1L) {
            last = Math.max(last, above.getValue());
            ranges.remove(above.getKey());
            above = ranges.higherEntry(above.getKey());
        }
        ranges.put(first, last);
    }

    boolean contains(int id) {
        Map.Entry<Integer, Integer> r = ranges.floorEntry(id);
        return r != null && id <= r.getValue();
    }

    /** How many ranges are kept: the size of this record. */
    int rangeCount() {
        return ranges.size();
    }

    boolean isEmpty() {
        return ranges.isEmpty();
    }

    /**
     * The {@code max} highest ids, one by one, in ascending order: the form of a snapshot of release 0.1.0, which
     * kept single ids (at most 1,000 per application, the highest).
     */
    java.util.List<Integer> highestIds(int max) {
        java.util.ArrayDeque<Integer> ids = new java.util.ArrayDeque<>();
        for (Map.Entry<Integer, Integer> r : ranges.descendingMap().entrySet()) {
            for (long id = r.getValue(); id >= r.getKey() && ids.size() < max; id--) ids.addFirst((int) id);
            if (ids.size() >= max) break;
        }
        return new java.util.ArrayList<>(ids);
    }

    /** The ranges in ascending order, first id to last id. */
    Map<Integer, Integer> ranges() {
        return java.util.Collections.unmodifiableMap(ranges);
    }
}
