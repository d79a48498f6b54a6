package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/**
 * Batches of several partitions on one worker, sent in one frame. {@code offsets[i]} is where partition i's bytes
 * start in the body; they run to the next offset (or the end). Saves one round trip per partition when a map
 * task ends with many small buffers. {@code forwarded} as for {@link PushData}.
 */
public final class PushMergedData extends AbstractMessage {
    /**
     * The most partitions one merged push may carry. A worker holds about 200 bytes of heap per entry until it has
     * answered (the decoded arrays, a slice of the body per entry, the groups forwarded to replicas): at this cap a
     * push costs about 13 MB of heap, where the frame size alone would allow about eleven million entries (over
     * 2 GB). A frame with more is refused (BAD_REQUEST) before anything is allocated for its entries; clients split
     * larger merges.
     */
    public static final int MAX_ENTRIES = 65_536;

    public final long requestId;
    public final String shuffleKey;
    public final int[] partitionIds;
    public final int[] epochs;
    public final int[] offsets;
    /** Sent by the primary's worker to the replicas (see {@link PushData}). */
    public final boolean forwarded;

    /** A client's push. */
    public PushMergedData(
            long requestId, String shuffleKey, int[] partitionIds, int[] epochs, int[] offsets, ManagedBuffer body) {
        this(requestId, shuffleKey, partitionIds, epochs, offsets, false, body);
    }

    public PushMergedData(
            long requestId,
            String shuffleKey,
            int[] partitionIds,
            int[] epochs,
            int[] offsets,
            boolean forwarded,
            ManagedBuffer body) {
        super(body);
        if (partitionIds.length != epochs.length || partitionIds.length != offsets.length) {
            throw new IllegalArgumentException("partitionIds, epochs and offsets differ in length");
        }
        this.requestId = requestId;
        this.shuffleKey = shuffleKey;
        this.partitionIds = partitionIds;
        this.epochs = epochs;
        this.offsets = offsets;
        this.forwarded = forwarded;
    }

    @Override
    public MessageType type() {
        return MessageType.PUSH_MERGED_DATA;
    }

    @Override
    public int headerLength() {
        return 8 + Codec.stringLength(shuffleKey) + 1 + 4 + 12 * partitionIds.length;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(requestId);
        Codec.writeString(out, shuffleKey);
        out.writeByte(forwarded ? Codec.FLAG_FORWARDED : 0);
        out.writeInt(partitionIds.length);
        for (int i = 0; i < partitionIds.length; i++) {
            out.writeInt(partitionIds[i]);
            out.writeInt(epochs[i]);
            out.writeInt(offsets[i]);
        }
    }

    static PushMergedData decode(ByteBuf in, ManagedBufferFactory bodies, int maxKeyBytes) {
        MessageType t = MessageType.PUSH_MERGED_DATA;
        Codec.need(in, 8, t);
        long id = in.readLong();
        String key = Codec.readString(in, t, maxKeyBytes);
        Codec.need(in, 5, t);
        boolean forwarded = Codec.readPushFlags(in, t);
        int n = in.readInt();
        if (n > MAX_ENTRIES) {
            throw new ProtocolException(
                    t + " frame of " + n + " partitions: a merged push carries at most " + MAX_ENTRIES);
        }
        if (n <= 0 || (long) n * 12 > in.readableBytes()) {
            throw new ProtocolException("malformed " + t + " frame: " + n + " partitions do not fit in the "
                    + in.readableBytes() + " bytes left");
        }
        int[] ids = new int[n];
        int[] epochs = new int[n];
        int[] offsets = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = in.readInt();
            epochs[i] = in.readInt();
            offsets[i] = in.readInt();
        }
        int bodyLen = in.readableBytes();
        for (int i = 0; i < n; i++) {
            int end = i + 1 < n ? offsets[i + 1] : bodyLen;
            if (offsets[i] < 0 || offsets[i] > end || end > bodyLen) {
                throw new ProtocolException("malformed " + t + " frame: offsets " + java.util.Arrays.toString(offsets)
                        + " do not fit a body of " + bodyLen + " bytes");
            }
        }
        return new PushMergedData(id, key, ids, epochs, offsets, forwarded, bodies.rest(in));
    }
}
