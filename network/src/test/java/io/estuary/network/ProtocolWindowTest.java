package io.estuary.network;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.Request;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.ProtocolRange;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.server.ResponseCallback;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.TransportObserver;
import io.estuary.network.server.TransportServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The compatibility window on real servers over real sockets: clients and servers of neighbouring releases agree on
 * the highest version both speak and then exchange requests; peers two releases apart are refused naming both
 * versions. Release 0.1.0's server is played byte for byte by {@link Release1Gate}.
 */
class ProtocolWindowTest {
    static final EstuaryConf CONF =
            new EstuaryConf().set(NetworkConfig.RPC_TIMEOUT, "5s").set(NetworkConfig.IO_THREADS, "1");
    static final ProtocolRange NEXT = new ProtocolRange(5, 6);

    /** Answers each request with its body unchanged. */
    static final class Echo implements RpcHandler {
        @Override
        public void receive(Channel channel, ByteBuf body, ResponseCallback callback) {
            callback.onSuccess(Unpooled.copiedBuffer(body));
        }
    }

    private static TransportServer server(ProtocolRange speaks) {
        return new TransportServer(
                CONF,
                "srv",
                "127.0.0.1",
                0,
                new Echo(),
                TransportObserver.NONE,
                speaks,
                io.estuary.common.time.Clock.system());
    }

    /** Sends a control request and returns the protocol version it stated, as the server received it. */
    private static int statedVersion(TransportClient c) throws Exception {
        ByteBuf r = c.sendRpcSync(ControlClient.encode(Request.newBuilder(), c.protocolVersion()));
        try {
            byte[] b = new byte[r.readableBytes()];
            r.readBytes(b);
            return Request.parseFrom(b).getProtocolVersion();
        } finally {
            r.release();
        }
    }

    @Test
    void neighbouringReleasesAgreeOnTheHighestCommonVersion() throws Exception {
        int[][] cases = { // client oldest, newest, server oldest, newest, agreed
            {5, 5, 5, 6, 5}, {5, 6, 5, 5, 5}, {5, 6, 5, 6, 6}, {6, 7, 5, 6, 6}, {5, 6, 6, 7, 6}
        };
        for (int[] k : cases) {
            try (TransportServer s = server(new ProtocolRange(k[2], k[3]));
                    TransportClientFactory f = new TransportClientFactory(CONF, "cli", new ProtocolRange(k[0], k[1]))) {
                TransportClient c = f.client("127.0.0.1", s.port());
                assertEquals(k[4], c.protocolVersion(), java.util.Arrays.toString(k));
                assertEquals(k[4], statedVersion(c), "control requests state the agreed version");
            }
        }
    }

    @Test
    void twoReleasesApartIsRefusedNamingBothVersions() throws Exception {
        int[][] cases = {{5, 5, 6, 7}, {6, 7, 5, 5}};
        for (int[] k : cases) {
            try (TransportServer s = server(new ProtocolRange(k[2], k[3]));
                    TransportClientFactory f = new TransportClientFactory(CONF, "cli", new ProtocolRange(k[0], k[1]))) {
                RemoteException e = assertThrows(RemoteException.class, () -> f.client("127.0.0.1", s.port()));
                assertEquals(StatusCode.VERSION_MISMATCH, e.status(), e.getMessage());
                String client = new ProtocolRange(k[0], k[1]).toString();
                assertTrue(e.getMessage().contains(client), e.getMessage());
                assertTrue(e.getMessage().contains("speaks protocol " + k[3]), e.getMessage());
            }
        }
    }

    @Test
    void aNewerClientMeetsARelease1ServerAfterOneRefusal() throws Exception {
        try (TransportServer backend = server(ProtocolRange.only(5));
                Release1Gate gate = new Release1Gate(backend.port());
                TransportClientFactory f = new TransportClientFactory(CONF, "cli", NEXT)) {
            TransportClient c = f.client("127.0.0.1", gate.port());
            assertEquals(5, c.protocolVersion());
            assertEquals(5, statedVersion(c));
            assertEquals(2, gate.connections.get(), "one refused hello (6), then hello 5");
            assertEquals(1, gate.refused.get());
        }
    }

    @Test
    void aRelease1ClientSeesExactlyWhatItAccepts() throws Exception {
        // Release 0.1.0's client: hello 5, then it requires outcome byte 1 and the next bytes are frames.
        try (TransportServer s = server(NEXT);
                Socket sock = new Socket("127.0.0.1", s.port())) {
            sock.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(sock.getOutputStream());
            DataInputStream in = new DataInputStream(sock.getInputStream());
            out.writeInt(Handshake.MAGIC);
            out.writeInt(5);
            out.flush();
            assertEquals(Handshake.MAGIC, in.readInt());
            assertEquals(5, in.readInt());
            assertEquals(1, in.readByte(), "0.1.0 clients take only outcome 1");
        }
    }

    /**
     * Release 0.1.0's server handshake, byte for byte, in front of a real server: it reads the 8-byte hello, refuses
     * any version but 5 with (magic, 5, 0) and closes; on hello 5 it hands the connection to the backend, whose
     * answer (5, 1) is what 0.1.0 answered, and relays bytes both ways.
     */
    static final class Release1Gate implements AutoCloseable {
        final ServerSocket listener = new ServerSocket(0);
        final AtomicInteger connections = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();
        private final int backendPort;

        Release1Gate(int backendPort) throws IOException {
            this.backendPort = backendPort;
            Thread t = new Thread(this::acceptLoop, "release1-gate");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        private void acceptLoop() {
            while (!listener.isClosed()) {
                try {
                    Socket s = listener.accept();
                    connections.incrementAndGet();
                    serve(s);
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void serve(Socket client) throws IOException {
            DataInputStream in = new DataInputStream(client.getInputStream());
            int magic = in.readInt();
            int version = in.readInt();
            if (magic != Handshake.MAGIC || version != 5) {
                refused.incrementAndGet();
                DataOutputStream out = new DataOutputStream(client.getOutputStream());
                out.writeInt(Handshake.MAGIC);
                out.writeInt(5);
                out.writeByte(0);
                out.flush();
                client.close();
                return;
            }
            Socket backend = new Socket("127.0.0.1", backendPort);
            DataOutputStream toBackend = new DataOutputStream(backend.getOutputStream());
            toBackend.writeInt(magic);
            toBackend.writeInt(version);
            toBackend.flush();
            relay(client.getInputStream(), backend.getOutputStream(), client, backend);
            relay(backend.getInputStream(), client.getOutputStream(), client, backend);
        }

        private static void relay(InputStream from, OutputStream to, Socket a, Socket b) {
            Thread t = new Thread(
                    () -> {
                        byte[] buf = new byte[8192];
                        try {
                            for (int n; (n = from.read(buf)) > 0; ) {
                                to.write(buf, 0, n);
                                to.flush();
                            }
                        } catch (IOException ignored) {
                            // either side closed
                        } finally {
                            try {
                                a.close();
                                b.close();
                            } catch (IOException ignored) {
                                // already closed
                            }
                        }
                    },
                    "release1-relay");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }
}
