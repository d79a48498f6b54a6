package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;

/**
 * Batches of one partition pushed by a map task. Body: one or more complete batches, appended by the worker as
 * they are. Answered with an empty {@link RpcResponse} once the worker has taken them.
 *
 * <p>{@code forwarded} is set only by a primary's worker passing the push on to the partition's replica: a replica
 * copy takes only forwarded pushes and a primary only direct ones, so a client can never write a replica alone.
 */
public final class PushData extends AbstractMessage {
    public final long requestId;
    public final String shuffleKey;
    public final int partitionId;
    public final int epoch;
    /** Sent by the primary's worker to the replica (see the class doc). */
    public final boolean forwarded;

    /** A client's push. */
    public PushData(long requestId, String shuffleKey, int partitionId, int epoch, ManagedBuffer body) {
        this(requestId, shuffleKey, partitionId, epoch, false, body);
    }

    public PushData(
            long requestId, String shuffleKey, int partitionId, int epoch, boolean forwarded, ManagedBuffer body) {
        super(body);
        this.requestId = requestId;
        this.shuffleKey = shuffleKey;
        this.partitionId = partitionId;
        this.epoch = epoch;
        this.forwarded = forwarded;
    }

    @Override
    public MessageType type() {
        return MessageType.PUSH_DATA;
    }

    @Override
    public int headerLength() {
        return 8 + Codec.stringLength(shuffleKey) + 8 + 1;
    }

    @Override
    public void encodeHeader(ByteBuf out) {
        out.writeLong(requestId);
        Codec.writeString(out, shuffleKey);
        out.writeInt(partitionId);
        out.writeInt(epoch);
        out.writeByte(forwarded ? Codec.FLAG_FORWARDED : 0);
    }

    static PushData decode(ByteBuf in, ManagedBufferFactory bodies, int maxKeyBytes) {
        MessageType t = MessageType.PUSH_DATA;
        Codec.need(in, 8, t);
        long id = in.readLong();
        String key = Codec.readString(in, t, maxKeyBytes);
        Codec.need(in, 9, t);
        int partition = in.readInt();
        int epoch = in.readInt();
        boolean forwarded = Codec.readPushFlags(in, t);
        return new PushData(id, key, partition, epoch, forwarded, bodies.rest(in));
    }
}
