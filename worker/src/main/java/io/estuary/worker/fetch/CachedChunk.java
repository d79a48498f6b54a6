package io.estuary.worker.fetch;

import io.estuary.network.buffer.ManagedBuffer;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A chunk served from the {@link io.estuary.worker.storage.PartitionCache}: a slice of the cached partition that
 * holds one reference to it. Single owner: {@link #retain} does not count, and {@link #release} lets the reference
 * go the first time only, so the transport (which releases the body once encoded) and the stream registry (which
 * releases it when the send completes, in case it was never encoded) may both call it. Thread-safe.
 */
final class CachedChunk extends ManagedBuffer {
    private final ByteBuf slice;
    private final AtomicBoolean released = new AtomicBoolean();

    CachedChunk(ByteBuf slice) {
        this.slice = slice;
    }

    @Override
    public long size() {
        return slice.readableBytes();
    }

    /** A reference of Netty's own, released once written. */
    @Override
    public Object convertToNetty() {
        return slice.retainedDuplicate();
    }

    @Override
    public ByteBuf toByteBuf() {
        return slice.retainedDuplicate();
    }

    @Override
    public ManagedBuffer retain() {
        return this;
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) slice.release();
    }
}
