package io.estuary.network.netty;

import io.estuary.common.util.NamedThreadFactory;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/** Event loops and allocators shared by servers and client factories. */
public final class NettyUtils {
    private NettyUtils() {}

    /**
     * Whether Netty's native epoll transport is on the class path and loads (servers ship it; the shaded client
     * does not, since native libraries do not survive relocation). Looked up by name so this module needs no
     * compile-time dependency on it.
     */
    private static final boolean EPOLL = epollAvailable();

    private static boolean epollAvailable() {
        try {
            Class<?> epoll = Class.forName("io.netty.channel.epoll.Epoll");
            return (Boolean) epoll.getMethod("isAvailable").invoke(null);
        } catch (ReflectiveOperationException | LinkageError e) {
            return false;
        }
    }

    public static boolean nativeEpoll() {
        return EPOLL;
    }

    public static EventLoopGroup eventLoops(int threads, String name) {
        int n = threads > 0 ? threads : Math.max(2, Runtime.getRuntime().availableProcessors() * 2);
        if (EPOLL) {
            try {
                return (EventLoopGroup) Class.forName("io.netty.channel.epoll.EpollEventLoopGroup")
                        .getConstructor(int.class, java.util.concurrent.ThreadFactory.class)
                        .newInstance(n, new NamedThreadFactory(name));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("epoll is available but its event loop cannot be created", e);
            }
        }
        return new NioEventLoopGroup(n, new NamedThreadFactory(name));
    }

    @SuppressWarnings("unchecked")
    public static Class<? extends ServerChannel> serverChannelClass() {
        if (!EPOLL) return NioServerSocketChannel.class;
        try {
            return (Class<? extends ServerChannel>) Class.forName("io.netty.channel.epoll.EpollServerSocketChannel");
        } catch (ClassNotFoundException e) {
            return NioServerSocketChannel.class;
        }
    }

    @SuppressWarnings("unchecked")
    public static Class<? extends Channel> clientChannelClass() {
        if (!EPOLL) return NioSocketChannel.class;
        try {
            return (Class<? extends Channel>) Class.forName("io.netty.channel.epoll.EpollSocketChannel");
        } catch (ClassNotFoundException e) {
            return NioSocketChannel.class;
        }
    }

    /** Socket reads that grow up to 1 MB: pushes arrive in large frames, so fewer, larger reads save syscalls. */
    public static AdaptiveRecvByteBufAllocator receiveBuffers() {
        return new AdaptiveRecvByteBufAllocator(1024, 64 * 1024, 1024 * 1024);
    }

    /**
     * The one pool of direct buffers of this JVM, shared by every server, client and flush buffer: each pool reserves
     * whole chunks per arena, so separate pools would multiply that overhead (a worker with six pools could hold tens
     * of MiB of mostly empty chunks beside what it really uses). No thread-local caches: memory held is what is in
     * use, not what threads hoard.
     */
    public static PooledByteBufAllocator allocator() {
        return SharedAllocator.INSTANCE;
    }

    private static final class SharedAllocator {
        static final PooledByteBufAllocator INSTANCE = new PooledByteBufAllocator(
                true,
                PooledByteBufAllocator.defaultNumHeapArena(),
                PooledByteBufAllocator.defaultNumDirectArena(),
                PooledByteBufAllocator.defaultPageSize(),
                PooledByteBufAllocator.defaultMaxOrder(),
                0,
                0,
                false);
    }
}
