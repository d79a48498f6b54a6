package io.estuary.network;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.ProtocolVersion;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.Request;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.MessageType;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.TransportServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The transport against malformed input, on a real server over real sockets. */
class TransportProtocolTest {
    static TransportServer server;
    static TransportClientFactory clients;
    static final EstuaryConf CONF = new EstuaryConf()
            .set(NetworkConfig.MAX_FRAME_SIZE, "64k")
            .set(NetworkConfig.RPC_TIMEOUT, "2s")
            .set(NetworkConfig.IO_THREADS, "2");

    /** Echoes request bodies; a body starting with "silence" is never answered. */
    static final class Echo implements RpcHandler {
        @Override
        public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
            if (body.toString(StandardCharsets.UTF_8).startsWith("silence")) return;
            callback.onSuccess(Unpooled.copiedBuffer(body));
        }
    }

    @BeforeAll
    static void start() {
        server = new TransportServer(CONF, "test-server", "127.0.0.1", 0, new Echo());
        clients = new TransportClientFactory(CONF, "test-client");
    }

    @AfterAll
    static void stop() {
        clients.close();
        server.close();
    }

    private static String echo(String text) throws RemoteException {
        TransportClient c = clients.client("127.0.0.1", server.port());
        ByteBuf r = c.sendRpcSync(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
        try {
            return r.toString(StandardCharsets.UTF_8);
        } finally {
            r.release();
        }
    }

    /** Sends raw bytes and returns the error the server reports before it closes the connection. */
    private static String sendRaw(byte[] bytes) throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            hello(s, in, ProtocolVersion.CURRENT);
            assertEquals(1, in.readByte(), "the server accepts its own version");
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeShort(0); // protocol 6: an anonymous AUTH_HELLO (no identity, a nonce)
            out.write(new byte[io.estuary.network.auth.AuthExchange.NONCE_BYTES]);
            out.flush();
            assertEquals(io.estuary.network.auth.AuthExchange.ADMITTED, in.readByte(), "authentication is off");
            s.getOutputStream().write(bytes);
            s.getOutputStream().flush();
            int len = in.readInt();
            assertEquals(MessageType.RPC_FAILURE.id(), in.readByte(), "the server answers with a failure frame");
            assertEquals(-1L, in.readLong(), "the failure concerns the whole connection");
            assertEquals(
                    io.estuary.common.status.StatusCode.BAD_REQUEST.id(),
                    in.readByte(),
                    "a malformed frame is a bad request");
            byte[] msg = new byte[in.readInt()];
            in.readFully(msg);
            assertEquals(len, 1 + 8 + 1 + 4 + msg.length);
            assertThrows(EOFException.class, in::readByte, "the server closes the connection");
            return new String(msg, StandardCharsets.UTF_8);
        }
    }

    /** Sends the handshake's hello and reads the answer up to its accepted/refused byte. */
    private static void hello(Socket s, DataInputStream in, int version) throws IOException {
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(Handshake.MAGIC);
        out.writeInt(version);
        out.flush();
        assertEquals(Handshake.MAGIC, in.readInt());
        assertEquals(ProtocolVersion.CURRENT, in.readInt(), "the server names its version");
    }

    @Test
    void aClientOfAnotherVersionIsRefusedAtConnectNamingBothVersions() throws Exception {
        for (int other : new int[] {ProtocolVersion.OLDEST - 1, ProtocolVersion.CURRENT + 1}) {
            try (TransportClientFactory f = new TransportClientFactory(CONF, "other-client", other)) {
                RemoteException e = assertThrows(RemoteException.class, () -> f.client("127.0.0.1", server.port()));
                assertEquals(io.estuary.common.status.StatusCode.VERSION_MISMATCH, e.status(), e.getMessage());
                assertTrue(
                        e.getMessage().contains("speaks Estuary protocol " + other)
                                && e.getMessage().contains("speaks protocol " + ProtocolVersion.CURRENT),
                        e.getMessage());
                assertFalse(e.status().isRetryable());
            }
        }
        assertEquals("still served", echo("still served"));
    }

    @Test
    void aServerOfAnotherVersionIsRefusedAtConnectNamingBothVersions() throws Exception {
        int other = ProtocolVersion.CURRENT + 1;
        try (TransportServer newer = new TransportServer(
                CONF,
                "newer-server",
                "127.0.0.1",
                0,
                new Echo(),
                io.estuary.network.server.TransportObserver.NONE,
                io.estuary.network.protocol.ProtocolRange.only(other),
                io.estuary.common.time.Clock.system())) {
            RemoteException e = assertThrows(RemoteException.class, () -> clients.client("127.0.0.1", newer.port()));
            assertEquals(io.estuary.common.status.StatusCode.VERSION_MISMATCH, e.status(), e.getMessage());
            assertTrue(
                    e.getMessage().contains("speaks Estuary " + io.estuary.network.protocol.ProtocolRange.THIS_RELEASE)
                            && e.getMessage().contains("speaks protocol " + other),
                    e.getMessage());
        }
    }

    @Test
    void aRawRefusalNamesTheServersVersionAndCloses() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            hello(s, in, ProtocolVersion.OLDEST - 1);
            assertEquals(0, in.readByte(), "refused");
            assertThrows(EOFException.class, in::readByte, "the server closes the connection");
        }
    }

    @Test
    void aNewerHelloIsAnsweredWithTheServersNewestVersion() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            hello(s, in, 99);
            assertEquals(Handshake.ACCEPTED_AT, in.readByte(), "accepted at the server's newest version");
        }
    }

    @Test
    void aClientWithoutTheHandshakeIsClosedUnanswered() throws Exception {
        // A client of a release before the handshake starts with a frame (here a well-formed RPC request).
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(frame(1 + 8 + 4, MessageType.RPC_REQUEST.id(), new byte[12]));
            s.getOutputStream().flush();
            assertEquals(-1, s.getInputStream().read(), "closed without an answer an old client would misread");
        }
        assertEquals("still served", echo("still served"));
    }

    private static byte[] frame(int length, int type, byte[] rest) throws IOException {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(b);
        out.writeInt(length);
        if (type >= 0) out.writeByte(type);
        out.write(rest);
        return b.toByteArray();
    }

    @Test
    void requestsAreAnswered() throws Exception {
        assertEquals("hello", echo("hello"));
    }

    @Test
    void oversizedFrameIsRefusedAndOthersAreStillServed() throws Exception {
        String err = sendRaw(frame(10_000_000, MessageType.RPC_REQUEST.id(), new byte[16]));
        assertTrue(err.contains("exceeds estuary.network.maxFrameSize"), err);
        assertEquals("still here", echo("still here"));
    }

    @Test
    void unknownTypeByteIsRefused() throws Exception {
        String err = sendRaw(frame(5, 0x7f, new byte[4]));
        assertTrue(err.contains("unknown message type 0x7f"), err);
        assertEquals("ok", echo("ok"));
    }

    @Test
    void truncatedHeaderIsRefused() throws Exception {
        // A push whose frame ends inside its header: only 3 of the 8 request-id bytes.
        String err = sendRaw(frame(4, MessageType.PUSH_DATA.id(), new byte[3]));
        assertTrue(err.contains("truncated PUSH_DATA frame"), err);
        // A string length that runs past the end of the frame.
        byte[] rest = java.nio.ByteBuffer.allocate(12).putLong(1).putInt(1000).array();
        err = sendRaw(frame(13, MessageType.PUSH_DATA.id(), rest));
        assertTrue(err.contains("does not fit"), err);
        assertEquals("ok", echo("ok"));
    }

    @Test
    void overlongShuffleKeyInAPushHeaderIsRefused() throws Exception {
        java.nio.ByteBuffer rest =
                java.nio.ByteBuffer.allocate(8 + 4 + 2000 + 8).putLong(1).putInt(2000);
        String err = sendRaw(frame(1 + rest.capacity(), MessageType.PUSH_DATA.id(), rest.array()));
        assertTrue(
                err.contains("PUSH_DATA header carries a string of 2000 bytes, more than "
                        + "estuary.network.request.maxStringBytes (1024) allows"),
                err);
        assertEquals("ok", echo("ok"));
    }

    @Test
    void emptyFrameIsRefused() throws Exception {
        String err = sendRaw(frame(0, -1, new byte[0]));
        assertTrue(err.contains("length 0"), err);
    }

    @Test
    void clientMayNotSendServerMessages() throws Exception {
        String err = sendRaw(frame(1 + 12, MessageType.CHUNK_FETCH_SUCCESS.id(), new byte[12]));
        assertTrue(err.contains("may not send CHUNK_FETCH_SUCCESS"), err);
    }

    @Test
    void unansweredRequestTimesOut() throws Exception {
        RemoteException e = assertThrows(RemoteException.class, () -> echo("silence please"));
        assertTrue(
                e.getMessage().contains("no answer from 127.0.0.1:" + server.port() + " within 2000 ms"),
                e.getMessage());
        assertTrue(e.isConnectionFailure(), "no answer is not an answer");
        RemoteException refused = assertThrows(RemoteException.class, () -> clients.client("127.0.0.1", 1));
        assertTrue(refused.isConnectionFailure(), refused.getMessage());
    }

    @Test
    void serverBindsTheConfiguredHostOnly() {
        assertEquals("127.0.0.1", server.boundAddress().getAddress().getHostAddress());
        assertFalse(server.boundAddress().getAddress().isAnyLocalAddress());
    }

    @Test
    void controlRequestsAreCheckedForMalformedBodiesAndVersions() throws Exception {
        try (TransportServer control =
                new TransportServer(CONF, "control", "127.0.0.1", 0, new ControlRpcHandler("control") {
                    @Override
                    protected void handle(Channel channel, Request request, Reply reply) {
                        if (request.getPayloadCase() != Request.PayloadCase.OPEN_STREAM) throw unsupported(request);
                        reply.ok(Empty.getDefaultInstance());
                    }
                })) {
            TransportClient c = clients.client("127.0.0.1", control.port());
            RemoteException e = assertThrows(
                    RemoteException.class,
                    () -> c.sendRpcSync(Unpooled.wrappedBuffer(new byte[] {(byte) 0xff, (byte) 0xff, 0x01})));
            assertTrue(e.getMessage().contains("malformed request"), e.getMessage());
            assertFalse(e.isConnectionFailure(), "the server answered: its error is the answer");

            byte[] future = Request.newBuilder()
                    .setProtocolVersion(99)
                    .setOpenStream(OpenStreamRequest.getDefaultInstance())
                    .build()
                    .toByteArray();
            e = assertThrows(RemoteException.class, () -> c.sendRpcSync(Unpooled.wrappedBuffer(future)));
            assertTrue(e.getMessage().contains("version 99"), e.getMessage());

            e = assertThrows(
                    RemoteException.class,
                    () -> ControlClient.ask(
                            c,
                            Request.newBuilder()
                                    .setMapperEnd(io.estuary.common.protocol.MapperEndRequest.getDefaultInstance()),
                            Empty.parser()));
            assertTrue(e.getMessage().contains("does not handle MAPPER_END"), e.getMessage());

            e = assertThrows(
                    RemoteException.class,
                    () -> ControlClient.ask(
                            c,
                            Request.newBuilder().setOpenStream(OpenStreamRequest.getDefaultInstance()),
                            Empty.parser()));
            assertEquals(io.estuary.common.status.StatusCode.BAD_REQUEST, e.status());
            assertTrue(e.getMessage().contains("open_stream.app_id is empty"), e.getMessage());

            assertNotNull(ControlClient.ask(
                    c,
                    Request.newBuilder()
                            .setOpenStream(OpenStreamRequest.newBuilder().setAppId("app-1")),
                    Empty.parser()));
        }
    }
}
