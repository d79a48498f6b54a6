package io.estuary.common.util;

import java.util.Arrays;
import java.util.Collection;

/**
 * A set of ids (partitions, maps) as a log line or a message can carry it: consecutive ids as ranges, at most
 * {@link #MAX_RANGES} ranges, and the count. A wide shuffle's refused push may name thousands of partitions; one line
 * listing each of them is a line nobody reads, and a megabyte in a log. Stateless.
 */
public final class IdRanges {
    /** Ranges shown before the rest is summed up. */
    public static final int MAX_RANGES = 8;

    private IdRanges() {}

    /** For example {@code [3-7, 9, 12-40] (31 ids)}; duplicates count once; an empty set is {@code []}. */
    public static String describe(Collection<Integer> ids) {
        int[] sorted =
                ids.stream().mapToInt(Integer::intValue).sorted().distinct().toArray();
        return describe(sorted);
    }

    /** As {@link #describe(Collection)}, for ids sorted ascending without duplicates. */
    private static String ofSorted(int[] sorted) {
        if (sorted.length == 0) return "[]";
        StringBuilder b = new StringBuilder("[");
        int ranges = 0;
        int i = 0;
        while (i < sorted.length) {
            int j = i;
            while (j + 1 < sorted.length && sorted[j + 1] == sorted[j] + 1) j++;
            if (ranges == MAX_RANGES) {
                b.append(", ...");
                break;
            }
            if (ranges > 0) b.append(", ");
            b.append(sorted[i]);
            if (j > i) b.append('-').append(sorted[j]);
            ranges++;
            i = j + 1;
        }
        b.append(']');
        if (sorted.length > 1) b.append(" (").append(sorted.length).append(" ids)");
        return b.toString();
    }

    /** As {@link #describe(Collection)}, for an array in any order. */
    public static String describe(int... ids) {
        return ofSorted(Arrays.stream(ids).sorted().distinct().toArray());
    }
}
