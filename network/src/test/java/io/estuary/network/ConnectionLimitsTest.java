package io.estuary.network;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.MessageType;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.TransportServer;
import io.estuary.testing.Waits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The transport's caps on real servers over real sockets: each refusal says why, and the server serves on. */
class ConnectionLimitsTest {

    private static EstuaryConf conf() {
        return new EstuaryConf().set(NetworkConfig.RPC_TIMEOUT, "20s").set(NetworkConfig.IO_THREADS, "2");
    }

    /**
     * Echoes request bodies. A body "slow" is answered 9 s later; a body "pause" is answered at once, then the server
     * stops reading from the connection for 9 s (as back-pressure does): it owes that connection nothing meanwhile.
     * Both last three idle timeouts of {@link #idleConnectionsCloseButWaitingOrPausedOnesDoNot}.
     */
    static final class SlowEcho implements RpcHandler {
        @Override
        public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
            String text = body.toString(StandardCharsets.UTF_8);
            ByteBuf answer = Unpooled.copiedBuffer(body);
            if (text.equals("slow")) {
                channel.eventLoop().schedule(() -> callback.onSuccess(answer), 9, TimeUnit.SECONDS);
            } else if (text.equals("pause")) {
                channel.config().setAutoRead(false);
                callback.onSuccess(answer);
                channel.eventLoop().schedule(() -> channel.config().setAutoRead(true), 9, TimeUnit.SECONDS);
            } else {
                callback.onSuccess(answer);
            }
        }
    }

    private static String echo(TransportClient c, String text) throws RemoteException {
        ByteBuf r = c.sendRpcSync(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
        try {
            return r.toString(StandardCharsets.UTF_8);
        } finally {
            r.release();
        }
    }

    private static String text(java.util.concurrent.CompletableFuture<ByteBuf> answer) throws Exception {
        ByteBuf b = answer.get(30, TimeUnit.SECONDS);
        try {
            return b.toString(StandardCharsets.UTF_8);
        } finally {
            b.release();
        }
    }

    /** Reads the connection-wide failure a server sends before closing, checks the close, returns the message. */
    private static String connectionFailure(Socket s, StatusCode expected) throws IOException {
        s.setSoTimeout(30_000);
        DataInputStream in = new DataInputStream(s.getInputStream());
        in.readInt();
        assertEquals(MessageType.RPC_FAILURE.id(), in.readByte(), "the server answers with a failure frame");
        assertEquals(-1L, in.readLong(), "the failure concerns the whole connection");
        assertEquals(expected.id(), in.readByte());
        byte[] msg = new byte[in.readInt()];
        in.readFully(msg);
        assertThrows(EOFException.class, in::readByte, "the server closes the connection");
        return new String(msg, StandardCharsets.UTF_8);
    }

    @Test
    void connectionsBeyondTheCapAreToldWhyAndClosed() throws Exception {
        EstuaryConf conf = conf().set(NetworkConfig.MAX_CONNECTIONS, "2");
        try (TransportServer server = new TransportServer(conf, "capped", "127.0.0.1", 0, new SlowEcho())) {
            TransportClientFactory first = new TransportClientFactory(conf, "first");
            TransportClientFactory second = new TransportClientFactory(conf, "second");
            try {
                TransportClient a = first.client("127.0.0.1", server.port());
                assertEquals("a", echo(a, "a"));
                assertEquals("b", echo(second.client("127.0.0.1", server.port()), "b"));
                try (Socket third = new Socket("127.0.0.1", server.port())) {
                    String why = connectionFailure(third, StatusCode.RETRY_LATER);
                    assertTrue(
                            why.contains("capped already holds 2 connections, the most "
                                    + "estuary.network.server.maxConnections allows"),
                            why);
                }
                assertEquals("still served", echo(a, "still served"));
                // A closed connection gives its place back: a newcomer is served.
                second.close();
                TransportClientFactory newcomer = new TransportClientFactory(conf, "newcomer");
                try {
                    Waits.waitFor(
                            () -> {
                                try {
                                    assertEquals(
                                            "welcome", echo(newcomer.client("127.0.0.1", server.port()), "welcome"));
                                    return true;
                                } catch (RemoteException e) {
                                    return false; // the server may not have seen the second connection close yet
                                }
                            },
                            30_000,
                            "a newcomer is served once a connection closed");
                } finally {
                    newcomer.close();
                }
            } finally {
                first.close();
                second.close();
            }
        }
    }

    @Test
    void idleConnectionsCloseButWaitingOrPausedOnesDoNot() throws Exception {
        // 3 s, not less: a stall of a loaded machine between two steps must not close a connection before it is
        // checked (each is checked as its answer arrives, a whole timeout before it may be closed).
        EstuaryConf conf = conf().set(NetworkConfig.IDLE_TIMEOUT, "3s");
        try (TransportServer server = new TransportServer(conf, "idler", "127.0.0.1", 0, new SlowEcho())) {
            TransportClientFactory slow = new TransportClientFactory(conf, "slow");
            TransportClientFactory paused = new TransportClientFactory(conf, "paused");
            TransportClientFactory fresh = new TransportClientFactory(conf, "fresh");
            try (Socket idle = new Socket("127.0.0.1", server.port())) {
                TransportClient slowClient = slow.client("127.0.0.1", server.port());
                TransportClient pausedClient = paused.client("127.0.0.1", server.port());
                java.util.concurrent.CompletableFuture<ByteBuf> slowAnswer =
                        slowClient.sendRpc(Unpooled.copiedBuffer("slow", StandardCharsets.UTF_8));
                assertEquals("pause", echo(pausedClient, "pause"));
                // Sent while the server does not read: it waits in the socket until reading resumes.
                java.util.concurrent.CompletableFuture<ByteBuf> pausedAnswer =
                        pausedClient.sendRpc(Unpooled.copiedBuffer("after the pause", StandardCharsets.UTF_8));

                String why = connectionFailure(idle, StatusCode.RETRY_LATER); // after about 3 s of silence
                assertTrue(
                        why.contains("idler closed the connection after 3000 ms without traffic "
                                + "(estuary.network.server.idleTimeout)"),
                        why);

                // Neither connection was closed while it waited: the paused one (read at its first idle report,
                // about 3 s in) and the slow one (owed an answer for 9 s, three idle periods). Each is checked when
                // its own answer arrives: a paused connection that then sends nothing is closed a timeout later by
                // design, which for this one falls at about 9 s, with the slow answer.
                assertEquals("after the pause", text(pausedAnswer));
                assertTrue(pausedClient.isActive(), "the paused connection was closed while it waited");
                assertEquals("slow", text(slowAnswer));
                assertTrue(slowClient.isActive(), "the connection owed a slow answer was closed");
                assertEquals("hello", echo(fresh.client("127.0.0.1", server.port()), "hello"));
            } finally {
                slow.close();
                paused.close();
                fresh.close();
            }
        }
    }

    @Test
    void controlRequestsOverTheLimitsAreRefusedAndTheConnectionServesOn() throws Exception {
        EstuaryConf conf = conf().set(NetworkConfig.MAX_STRING_BYTES, "100");
        try (TransportServer server = new TransportServer(
                        conf,
                        "limited",
                        "127.0.0.1",
                        0,
                        new ControlRpcHandler("limited", io.estuary.network.rpc.RequestLimits.from(conf)) {
                            @Override
                            protected void handle(Channel channel, Request request, Reply reply) {
                                reply.ok(
                                        StreamHandle.newBuilder().setStreamId(7).build());
                            }
                        });
                TransportClientFactory clients = new TransportClientFactory(conf, "client")) {
            TransportClient c = clients.client("127.0.0.1", server.port());
            StringBuilder app = new StringBuilder();
            for (int i = 0; i < 101; i++) app.append('a');
            RemoteException e = assertThrows(
                    RemoteException.class,
                    () -> ControlClient.ask(
                            c,
                            Request.newBuilder()
                                    .setOpenStream(
                                            OpenStreamRequest.newBuilder().setAppId(app.toString())),
                            StreamHandle.parser()));
            assertEquals(StatusCode.BAD_REQUEST, e.status());
            assertTrue(
                    e.getMessage()
                            .contains("limited refuses the request: open_stream.app_id is a string of 101 bytes, "
                                    + "more than estuary.network.request.maxStringBytes (100) allows"),
                    e.getMessage());
            assertEquals(
                    7,
                    ControlClient.ask(
                                    c,
                                    Request.newBuilder()
                                            .setOpenStream(OpenStreamRequest.newBuilder()
                                                    .setAppId("app")),
                                    StreamHandle.parser())
                            .getStreamId(),
                    "the same connection serves on");
        }
    }
}
