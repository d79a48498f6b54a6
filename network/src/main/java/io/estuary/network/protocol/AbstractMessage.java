package io.estuary.network.protocol;

import io.estuary.network.buffer.ManagedBuffer;

abstract class AbstractMessage implements Message {
    private final ManagedBuffer body;
    private final java.util.concurrent.atomic.AtomicBoolean bodyReleased =
            new java.util.concurrent.atomic.AtomicBoolean();

    AbstractMessage(ManagedBuffer body) {
        this.body = body;
    }

    @Override
    public ManagedBuffer body() {
        return body;
    }

    @Override
    public void releaseBody() {
        if (body != null && bodyReleased.compareAndSet(false, true)) body.release();
    }
}
