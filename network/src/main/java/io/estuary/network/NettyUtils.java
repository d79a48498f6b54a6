package io.estuary.network;

import io.estuary.common.util.NamedThreadFactory;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/** Event loops and allocators shared by servers and client factories. */
public final class NettyUtils {
  private NettyUtils() {}

  public static EventLoopGroup eventLoops(int threads, String name) {
    int n = threads > 0 ? threads : Math.max(2, Runtime.getRuntime().availableProcessors() * 2);
    return new NioEventLoopGroup(n, new NamedThreadFactory(name));
  }

  /** Direct pooled buffers, no thread-local caches: memory held is what is in use, not what threads hoard. */
  public static PooledByteBufAllocator allocator() {
    return new PooledByteBufAllocator(true, PooledByteBufAllocator.defaultNumHeapArena(),
        PooledByteBufAllocator.defaultNumDirectArena(), PooledByteBufAllocator.defaultPageSize(),
        PooledByteBufAllocator.defaultMaxOrder(), 0, 0, false);
  }
}
