package io.estuary.network.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;

/**
 * Makes Netty report the buffers that became unreachable unreleased: collects garbage until the reference handler
 * has caught up, then allocates (at the paranoid level every allocation makes Netty look for collected buffers and
 * report them). Shared by {@link LeakCheckExtension} and {@link FileLeakDetector}'s shutdown hook; needs nothing but
 * Netty, so it also runs in JVMs without JUnit. Stateless; each run allocates and releases its own probe buffers.
 */
final class LeakSweep {
    private LeakSweep() {}

    static void run() throws InterruptedException {
        for (int round = 0; round < 2; round++) {
            ReferenceQueue<Object> queue = new ReferenceQueue<>();
            WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
            System.gc();
            queue.remove(2000); // once the sentinel is enqueued, so are the references this collection cleared
            sentinel.clear();
            Thread.sleep(10);
            ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(1);
            direct.release();
            Unpooled.buffer(1).release();
        }
    }
}
