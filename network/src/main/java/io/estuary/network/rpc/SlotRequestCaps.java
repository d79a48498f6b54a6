package io.estuary.network.rpc;

/**
 * How many entries a ReserveSlots (locations, on a worker) or a ReviveSlots (partition ids, on the master) may
 * carry. Each entry makes the server build objects on its heap (a worker: the parsed location and its partition
 * writer; the master: a new location and replica for the answer), so one request may take at most
 * 1/{@value #HEAP_SHARE} of the server's heap, at a generous estimate of the bytes per entry; never fewer than
 * {@link #PER_REQUEST}, the most a driver sends in one request (it splits larger ones), so no server refuses a
 * driver's request however small its heap. Checked on the request's bytes, before anything is built
 * ({@link RequestLimits#withListCap}). Stateless.
 */
public final class SlotRequestCaps {
    private SlotRequestCaps() {}

    /** The most locations or partitions a driver puts in one ReserveSlots or ReviveSlots request. */
    public static final int PER_REQUEST = 10_000;
    /** The share of its heap a server lets one such request take. */
    static final int HEAP_SHARE = 16;
    /**
     * A reserved location on a worker: the parsed location with its peer (two locations, two worker addresses with
     * their host strings, about 400 bytes) and its partition writer (the writer, its name and file path, chunk list,
     * map index and registry entries, about 700 bytes); doubled for what the estimate misses.
     */
    static final long BYTES_PER_RESERVED_LOCATION = 2048;
    /**
     * A revived partition on the master: its new primary and replica locations in the answer, their worker
     * addresses and the answer's encoding (about 500 bytes); doubled.
     */
    static final long BYTES_PER_REVIVED_PARTITION = 1024;

    /** The most locations one ReserveSlots may carry to a worker with {@code maxHeapBytes} of heap. */
    public static int reserveLocations(long maxHeapBytes) {
        return cap(maxHeapBytes, BYTES_PER_RESERVED_LOCATION);
    }

    /** The most partitions one ReviveSlots may carry to a master with {@code maxHeapBytes} of heap. */
    public static int revivePartitions(long maxHeapBytes) {
        return cap(maxHeapBytes, BYTES_PER_REVIVED_PARTITION);
    }

    /** Why the cap is what it is, for the refusal. */
    public static String reason(long maxHeapBytes, String what) {
        return "one request may take 1/" + HEAP_SHARE + " of this server's " + (maxHeapBytes >> 20) + " MB heap, at "
                + "about " + (what.equals("location") ? BYTES_PER_RESERVED_LOCATION : BYTES_PER_REVIVED_PARTITION)
                + " bytes per " + what;
    }

    private static int cap(long maxHeapBytes, long perEntry) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(PER_REQUEST, maxHeapBytes / HEAP_SHARE / perEntry));
    }
}
