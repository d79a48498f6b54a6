package io.estuary.network.tls;

import io.estuary.common.config.TlsConfig;
import io.estuary.common.status.StatusCode;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;

/**
 * Sits after a client connection's TLS handler and keeps why TLS failed (the handshake, or an alert the server sent
 * right after it, as TLS 1.3 servers do when they refuse a client certificate), for the connecting thread to report
 * instead of "connection closed". Written on the event loop, read by the connecting thread.
 */
public final class ClientTlsGuard extends ChannelInboundHandlerAdapter {
    private final String remote;
    private final TlsConfig.Group group;
    private volatile TlsFailures.Described failure;
    private boolean handshaken; // event loop only

    ClientTlsGuard(String remote, TlsConfig.Group group) {
        this.remote = remote;
        this.group = group;
    }

    /** Why TLS failed on this connection, or null. */
    public StatusCode failureStatus() {
        TlsFailures.Described f = failure;
        return f == null ? null : f.status;
    }

    /** The words for {@link #failureStatus()}, or null. */
    public String failureMessage() {
        TlsFailures.Described f = failure;
        return f == null ? null : f.message;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof SslHandshakeCompletionEvent) {
            SslHandshakeCompletionEvent e = (SslHandshakeCompletionEvent) evt;
            if (e.isSuccess()) handshaken = true;
            else record(e.cause());
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (TlsFailures.isTls(cause)) {
            record(cause);
            if (!handshaken) { // the connecting thread reports it; nothing else was sent yet
                ctx.close();
                return;
            }
        }
        ctx.fireExceptionCaught(cause);
    }

    private void record(Throwable cause) {
        if (failure == null) failure = TlsFailures.client(remote, group, cause);
    }
}
