package io.estuary.network.rpc;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.estuary.common.protocol.Request;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/** Sends protobuf control requests over a {@link TransportClient} and parses the typed answers. */
public final class ControlClient {
    private ControlClient() {}

    /** The request as sent on a connection that agreed on {@code protocolVersion} (it says which one it uses). */
    public static ByteBuf encode(Request.Builder request, int protocolVersion) {
        return Unpooled.wrappedBuffer(
                request.setProtocolVersion(protocolVersion).build().toByteArray());
    }

    public static <T extends MessageLite> CompletableFuture<T> askAsync(
            TransportClient client, Request.Builder request, Parser<T> parser) {
        return client.sendRpc(encode(request, client.protocolVersion()))
                .thenApply(buf -> parse(buf, parser, client.remoteAddress()));
    }

    public static <T extends MessageLite> T ask(TransportClient client, Request.Builder request, Parser<T> parser)
            throws RemoteException {
        return TransportClient.await(askAsync(client, request, parser));
    }

    /** As {@link #ask(TransportClient, Request.Builder, Parser)}, waiting up to {@code timeoutMs} for the answer. */
    public static <T extends MessageLite> T ask(
            TransportClient client, Request.Builder request, Parser<T> parser, long timeoutMs) throws RemoteException {
        return TransportClient.await(client.sendRpc(encode(request, client.protocolVersion()), timeoutMs)
                .thenApply(buf -> parse(buf, parser, client.remoteAddress())));
    }

    static <T> T parse(ByteBuf buf, Parser<T> parser, String remote) {
        try (ByteBufInputStream in = new ByteBufInputStream(buf, true)) {
            return parser.parseFrom(in);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("malformed answer from " + remote + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
