package io.estuary.network.tls;

import io.estuary.common.config.TlsConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.nio.channels.ClosedChannelException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sits after a server connection's TLS handler: logs a failed TLS handshake (WARN naming the peer and the cause, at
 * most one a second per process, with how many were not logged) and keeps TLS errors from reaching the request
 * handler; the TLS handler closes the connection itself, and the server keeps serving the others. Confined to the
 * channel's event loop (the limit, {@link HandshakeWarnLimit}, is shared and thread-safe).
 */
final class ServerTlsGuard extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ServerTlsGuard.class);

    private final String serverName;
    private final TlsConfig.Group group;
    private final HandshakeWarnLimit warnLimit;
    private boolean reported;

    ServerTlsGuard(String serverName, TlsConfig.Group group, HandshakeWarnLimit warnLimit) {
        this.serverName = serverName;
        this.group = group;
        this.warnLimit = warnLimit;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof SslHandshakeCompletionEvent) {
            SslHandshakeCompletionEvent e = (SslHandshakeCompletionEvent) evt;
            if (!e.isSuccess()) report(ctx, e.cause());
            else ctx.pipeline().remove(this); // nothing more to watch: the connection is TLS now
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!TlsFailures.isTls(cause)) {
            ctx.fireExceptionCaught(cause);
            return;
        }
        report(ctx, cause);
        ctx.close();
    }

    private void report(ChannelHandlerContext ctx, Throwable cause) {
        if (reported) return;
        reported = true;
        if (cause instanceof ClosedChannelException) {
            // The peer left before finishing (a TCP probe, or a plain client already told why): nothing to say.
            LOG.debug(
                    "{}: {} closed the connection during the TLS handshake",
                    serverName,
                    ctx.channel().remoteAddress());
            return;
        }
        long unlogged = warnLimit.tryLog();
        if (unlogged >= 0) {
            LOG.warn(
                    "{}: {} {}; connection closed{}",
                    serverName,
                    ctx.channel().remoteAddress(),
                    TlsFailures.server(group, cause),
                    unlogged > 0 ? " (" + unlogged + " more failed TLS handshakes not logged)" : "");
        }
    }
}
