package io.estuary.network.rpc;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.estuary.common.ProtocolVersion;
import io.estuary.common.protocol.Request;
import io.estuary.common.status.StatusCode;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Base of every server's control-request handler: parses the {@link Request}, refuses other protocol versions by
 * name, requests over the {@link RequestLimits} and requests with malformed identifiers ({@link RequestIds}) with
 * BAD_REQUEST (before the handler sees them), and turns
 * exceptions into failures that carry their message to the caller.
 */
public abstract class ControlRpcHandler implements RpcHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ControlRpcHandler.class);

    protected final String serverName;
    private final RequestLimits limits;

    /** A handler held to the default limits (tests). */
    protected ControlRpcHandler(String serverName) {
        this(serverName, RequestLimits.DEFAULTS);
    }

    protected ControlRpcHandler(String serverName, RequestLimits limits) {
        this.serverName = serverName;
        this.limits = limits;
    }

    /** Handles one request; answer through {@code reply}, now or later. Throwing fails the request. */
    protected abstract void handle(Channel channel, Request request, Reply reply) throws Exception;

    @Override
    public final void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
        Request request;
        try {
            // Sizes first, on the bytes: an oversized request is refused before anything is built from it.
            String overLimit = limits.check(body.nioBuffer(), Request.getDescriptor());
            if (overLimit != null) {
                LOG.warn(
                        "{}: refused a request from {}: {}",
                        serverName,
                        channel == null ? null : channel.remoteAddress(),
                        overLimit);
                callback.onFailure(StatusCode.BAD_REQUEST, serverName + " refuses the request: " + overLimit);
                return;
            }
            try (ByteBufInputStream in = new ByteBufInputStream(body.retainedDuplicate(), true)) {
                request = Request.parseFrom(in);
            }
        } catch (InvalidProtocolBufferException e) {
            callback.onFailure(StatusCode.BAD_REQUEST, serverName + ": malformed request: " + e.getMessage());
            return;
        } catch (IOException e) {
            callback.onFailure(StatusCode.BAD_REQUEST, serverName + ": unreadable request: " + e);
            return;
        }
        // Any version this release speaks: a client of the previous release states its own (docs/upgrading.md).
        if (request.getProtocolVersion() < ProtocolVersion.OLDEST
                || request.getProtocolVersion() > ProtocolVersion.CURRENT) {
            callback.onFailure(
                    StatusCode.BAD_REQUEST,
                    serverName + " speaks protocol versions " + ProtocolVersion.OLDEST + " to "
                            + ProtocolVersion.CURRENT
                            + " but the request uses version " + request.getProtocolVersion()
                            + "; upgrade the older side");
            return;
        }
        String badId = RequestIds.problem(request);
        if (badId != null) {
            LOG.warn(
                    "{}: refused a request from {}: {}",
                    serverName,
                    channel == null ? null : channel.remoteAddress(),
                    badId);
            callback.onFailure(StatusCode.BAD_REQUEST, serverName + " refuses the request: " + badId);
            return;
        }
        Reply reply = new Reply(callback);
        try {
            handle(channel, request, reply);
        } catch (Exception e) {
            if (!(e instanceof IllegalArgumentException || e instanceof io.estuary.common.util.EstuaryException)) {
                LOG.warn("{}: {} failed", serverName, request.getPayloadCase(), e);
            }
            reply.fail(ResponseCallback.statusOf(e), e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    protected final IllegalArgumentException unsupported(Request request) {
        return new IllegalArgumentException(serverName + " does not handle " + request.getPayloadCase() + " requests");
    }

    /** The answer to one request; the first call wins, later ones are ignored. */
    public static final class Reply {
        private final ResponseCallback callback;
        private boolean done;

        Reply(ResponseCallback callback) {
            this.callback = callback;
        }

        public synchronized void ok(MessageLite response) {
            if (done) return;
            done = true;
            callback.onSuccess(Unpooled.wrappedBuffer(response.toByteArray()));
        }

        public synchronized void fail(StatusCode status, String error) {
            if (done) return;
            done = true;
            callback.onFailure(status, error);
        }

        /** Fails with the status the exception carries, see {@link ResponseCallback#statusOf}. */
        public void fail(Throwable e) {
            fail(ResponseCallback.statusOf(e), e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }
}
