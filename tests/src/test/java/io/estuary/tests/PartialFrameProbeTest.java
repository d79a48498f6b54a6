package io.estuary.tests;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.ProtocolVersion;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.network.protocol.Handshake;
import io.estuary.network.protocol.MessageType;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import io.estuary.worker.storage.MemoryTracker;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * The probe of issue 14, item 4: seven connections that each announce a large push and send most of it, then
 * nothing, against a worker with a small memory limit. The bytes of their unfinished frames count as held memory and
 * pause the worker; nothing else can free them. Scaled down (a 24 MiB worker, 4 MiB pushes of which 3.5 MiB are
 * sent, where the issue had 128 MiB) so the wedge is real and the test quick. A Spark job started while the worker
 * is paused must still finish, exactly: the silent connections are closed after the idle timeout (they are read on
 * while paused, being mid-frame, so their silence is their own) and the worker resumes.
 */
class PartialFrameProbeTest {
    static final int SOCKETS = 7;
    static final int ANNOUNCED = 4 << 20;
    static final int SENT = ANNOUNCED - (512 << 10);
    static final long IDLE_MS = 3_000;
    static final int MAPS = 4;
    static final int RECORDS_PER_MAP = 40_000;

    static JavaPairRDD<Integer, String> input(SparkSession s) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < MAPS; i++) seeds.add(i);
        return ShuffleJobs.jsc(s).parallelize(seeds, MAPS).flatMapToPair(seed -> {
            Random r = new Random(seed);
            List<Tuple2<Integer, String>> out = new ArrayList<>();
            for (int i = 0; i < RECORDS_PER_MAP; i++) {
                out.add(new Tuple2<>(r.nextInt(100_000), seed + "-" + i + "-" + Long.toHexString(r.nextLong())));
            }
            return out.iterator();
        });
    }

    @Test
    void silentUnfinishedPushesCannotKeepAWorkerPaused() throws Exception {
        // Permissive: the probes speak the handshake by hand, anonymously (an enforcing worker refuses them before any
        // frame: the wedge then needs an application's credentials, which any of its executors holds).
        EstuaryConf conf = io.estuary.testing.ClusterSecrets.enable(
                        new EstuaryConf(), io.estuary.testing.ClusterSecrets.shared())
                .set(io.estuary.common.config.AuthConfig.MODE, "permissive")
                .set(WorkerConfig.MAX_BUFFERED_BYTES, "24m")
                .set(NetworkConfig.IDLE_TIMEOUT, IDLE_MS + "ms");
        try (MiniCluster cluster = new MiniCluster(1, 1, conf)) {
            Worker worker = cluster.workers().get(0);
            MemoryTracker memory = worker.storage().memory();
            List<Socket> probes = new ArrayList<>();
            SparkSession spark = null;
            try {
                spark = SparkSessions.start(
                        SparkSessions.estuary(SparkSessions.base("local[2]", "probe"), cluster.masterEndpoint())
                                .set("spark.estuary.client.push.replicate", "false"));
                SparkSession s = spark;
                Checksum expected = Checksum.of(input(s).map(kv -> kv._1() + "=" + kv._2()));

                // Each probe sends from a thread of its own: once the worker pauses, a probe's send can block until the
                // worker closes it, and the pause must be watched meanwhile.
                java.util.concurrent.ExecutorService senders =
                        java.util.concurrent.Executors.newFixedThreadPool(SOCKETS);
                List<java.util.concurrent.Future<Socket>> sending = new ArrayList<>();
                for (int i = 0; i < SOCKETS; i++) sending.add(senders.submit(() -> probe(worker)));
                long sentAt = System.nanoTime();
                try {
                    waitFor(memory::paused, 60_000, "the probe's unfinished pushes pause the worker");
                    for (java.util.concurrent.Future<Socket> f : sending) probes.add(f.get(2, TimeUnit.MINUTES));
                } finally {
                    senders.shutdown();
                }
                System.out.printf(
                        "PROBE: %d connections hold %.1f of %d MiB announced each; worker paused, %d bytes held of "
                                + "%d%n",
                        SOCKETS, SENT / 1048576.0, ANNOUNCED >> 20, memory.held(), memory.limit());
                long t0 = System.nanoTime();
                // Started while the worker is paused; its pushes wait with everyone else's until the worker resumes.
                CompletableFuture<Checksum> job = CompletableFuture.supplyAsync(() -> Checksum.of(
                        input(s).partitionBy(new HashPartitioner(16)).map(kv -> kv._1() + "=" + kv._2())));

                waitFor(() -> !memory.paused(), 120_000, "the worker resumes once the silent connections are closed");
                long pausedMs = (System.nanoTime() - sentAt) / 1_000_000;
                for (Socket p : probes) assertClosedByServer(p);
                Checksum got = job.get(5, TimeUnit.MINUTES);
                long jobMs = (System.nanoTime() - t0) / 1_000_000;
                assertEquals(expected, got, "what the reducers read must be what the maps wrote");
                System.out.printf(
                        "PROBE after the fix: worker paused %d ms (idle timeout %d ms), all %d probe connections "
                                + "closed by the worker, concurrent job exact in %d ms%n",
                        pausedMs, IDLE_MS, SOCKETS, jobMs);
            } finally {
                for (Socket p : probes) p.close();
                if (spark != null) spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }

    /** A connection that says hello, announces a push of {@link #ANNOUNCED} bytes, sends {@link #SENT} and stops. */
    static Socket probe(Worker worker) throws IOException {
        Socket s = new Socket(worker.address().getHost(), worker.address().getPushPort());
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(Handshake.MAGIC);
        out.writeInt(ProtocolVersion.CURRENT);
        out.flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] answer = new byte[Handshake.ANSWER_SIZE];
        in.readFully(answer);
        assertEquals(1, answer[Handshake.ANSWER_SIZE - 1], "the worker accepts the handshake");
        out.writeShort(0); // protocol 6: an anonymous AUTH_HELLO (no identity, a nonce)
        out.write(new byte[io.estuary.network.auth.AuthExchange.NONCE_BYTES]);
        out.flush();
        assertEquals(io.estuary.network.auth.AuthExchange.ADMITTED, in.readByte(), "the worker admits the probe");
        try {
            out.writeInt(ANNOUNCED); // frame length: type byte and body
            out.writeByte(MessageType.PUSH_DATA.id());
            out.write(new byte[SENT - 5]);
            out.flush();
        } catch (IOException closedByTheWorker) {
            // The worker paused, then closed the silent connection while this send was still blocked: what is tested.
        }
        return s;
    }

    /** Reads what the server still says (its idle notice) up to the end of the stream. */
    static void assertClosedByServer(Socket s) throws IOException {
        s.setSoTimeout(60_000);
        InputStream in = s.getInputStream();
        byte[] b = new byte[4096];
        try {
            while (in.read(b) >= 0) {
                // the server's last words
            }
        } catch (SocketTimeoutException e) {
            fail("the worker did not close a silent probe connection within 60 s");
        } catch (IOException reset) {
            // closed by the server with unread data in its socket: a reset is a close too
        }
    }
}
