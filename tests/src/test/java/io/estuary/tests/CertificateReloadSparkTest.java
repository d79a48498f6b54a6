package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import io.estuary.testing.ClusterSecrets;
import io.estuary.testing.TestCertificates;
import io.estuary.testing.Waits;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * Certificate renewal during a job, as cert-manager does it: a real master and two real workers on loopback run with
 * authentication, TLS on the cluster-internal and data port groups and replicas on, presenting certificate files that
 * are replaced (certificate, then key, copied over in place) while a Spark 3.5 job with two shuffles runs. The job's
 * maps push over connections opened before the replacement and are held at their end until every server port (the
 * master's, each worker's control, push and fetch ports) presents the renewed certificate to a new connection; the
 * reads and the second shuffle then run on connections opened after it. Proves that new connections of every server
 * use the renewed certificate without a restart, that the open ones carry on, and that the job returns exactly native
 * Spark's output (count and order-independent checksum) without a stage rerun.
 */
class CertificateReloadSparkTest {
    static final int MAPS = 4;
    static final int REDUCERS = 6;
    static final TlsConfig.Group[] GROUPS = {TlsConfig.Group.INTERNAL, TlsConfig.Group.DATA};

    /** Held by the gated job's maps at their end: each counts down {@code atGate}, then waits for {@code go}. */
    static volatile CountDownLatch atGate;

    static volatile CountDownLatch go;

    @TempDir
    static Path dir;

    /** Two shuffles: a groupByKey, then a reduceByKey over a new key. With {@code gated}, maps wait at their end. */
    static Checksum job(SparkSession s, boolean gated) {
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < MAPS; i++) seeds.add(i);
        JavaPairRDD<Integer, String> pairs = ShuffleJobs.jsc(s)
                .parallelize(seeds, MAPS)
                .flatMapToPair(slice -> {
                    List<Tuple2<Integer, String>> out = new ArrayList<>();
                    for (int i = slice; i < 60_000; i += MAPS) {
                        out.add(new Tuple2<>((int) ((i * 2654435761L) % 5_000), "v" + i + "-payload"));
                    }
                    return gated ? new GatedIterator<>(out.iterator()) : out.iterator();
                });
        JavaPairRDD<Integer, Long> grouped = pairs.groupByKey(REDUCERS).mapToPair(kv -> {
            long n = 0;
            long sum = 0;
            for (String v : kv._2()) {
                n++;
                sum += v.hashCode();
            }
            return new Tuple2<>(kv._1() % 101, n * 1_000_003L + sum);
        });
        return Checksum.of(grouped.reduceByKey(Long::sum, REDUCERS).map(kv -> kv._1() + "=" + kv._2()));
    }

    /** Passes records through; once they run out, waits at the gate (the map's last pushes are still buffered). */
    static final class GatedIterator<T> implements Iterator<T> {
        private final Iterator<T> in;
        private boolean passed;

        GatedIterator(Iterator<T> in) {
            this.in = in;
        }

        @Override
        public boolean hasNext() {
            boolean more = in.hasNext();
            if (!more && !passed) {
                passed = true;
                atGate.countDown();
                try {
                    if (!go.await(3, TimeUnit.MINUTES)) throw new IllegalStateException("the gate never opened");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            return more;
        }

        @Override
        public T next() {
            return in.next();
        }
    }

    @Test
    void renewedCertificateFilesServeNewConnectionsMidJobAndTheJobReturnsTheNativeOutput() throws Exception {
        SparkSession nat = SparkSessions.start(SparkSessions.base("local[4]", "native"));
        Checksum expected;
        try {
            expected = job(nat, false);
        } finally {
            nat.stop();
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
        }

        TestCertificates ca = TestCertificates.authority(dir, "cluster");
        TestCertificates.Issued initial = ca.issue("initial");
        TestCertificates.Issued renewed = ca.issue("renewed");
        Path live = Files.createDirectories(dir.resolve("live"));
        TestCertificates.Issued served = new TestCertificates.Issued(live.resolve("tls.crt"), live.resolve("tls.key"));
        initial.copyOver(served);
        EstuaryConf conf = ca.configure(new EstuaryConf(), served, false, GROUPS)
                // The real clock runs this test: new connections look at the files at most once a second.
                .set(TlsConfig.RELOAD_INTERVAL, "1s");
        ClusterSecrets.enable(conf, ClusterSecrets.newFile(dir));
        try (MiniCluster cluster = new MiniCluster(2, 1, conf)) {
            SparkConf sparkConf = SparkSessions.estuary(
                            SparkSessions.base("local[" + MAPS + "]", "certificate-reload"), cluster.masterEndpoint())
                    .set("spark.estuary.auth.enabled", "true")
                    .set("spark.estuary.client.push.bufferSize", "16k");
            for (TlsConfig.Group g : GROUPS) {
                sparkConf
                        .set("spark." + g.enabled.key(), "true")
                        .set("spark." + g.trustFile.key(), ca.trustFile().toString());
            }
            SparkSession spark = SparkSessions.start(sparkConf);
            AtomicInteger stages = new AtomicInteger();
            AtomicInteger reruns = new AtomicInteger();
            spark.sparkContext().addSparkListener(new SparkListener() {
                @Override
                public void onStageSubmitted(SparkListenerStageSubmitted e) {
                    stages.incrementAndGet();
                    if (e.stageInfo().attemptNumber() > 0) reruns.incrementAndGet();
                }
            });
            atGate = new CountDownLatch(MAPS);
            go = new CountDownLatch(1);
            try {
                CompletableFuture<Checksum> running = CompletableFuture.supplyAsync(() -> job(spark, true));
                try {
                    assertTrue(atGate.await(3, TimeUnit.MINUTES), "the maps never reached the gate");
                    Map<String, Integer> ports = serverPorts(cluster);
                    assertEquals(
                            expectedSubjects(ports, "CN=initial"),
                            subjects(ports, ca.trustFile()),
                            "before the files are replaced");

                    renewed.copyOver(served);
                    Waits.waitFor(
                            () -> expectedSubjects(ports, "CN=renewed").equals(subjects(ports, ca.trustFile())),
                            120_000,
                            "every server port presents the renewed certificate to a new connection");
                } finally {
                    go.countDown(); // the maps end; the reads and the second shuffle open new connections
                }
                assertEquals(expected, running.get(3, TimeUnit.MINUTES), "the job's output");
                spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
                assertTrue(stages.get() >= 3, "two shuffles, three stages: " + stages.get());
                assertEquals(0, reruns.get(), "stage reruns");
                // New connections after the job still get the renewed certificate.
                Map<String, Integer> ports = serverPorts(cluster);
                assertEquals(expectedSubjects(ports, "CN=renewed"), subjects(ports, ca.trustFile()), "after the job");
            } finally {
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
            }
        }
    }

    /** Every TLS port of the cluster, by name: the master's and each worker's control, push and fetch ports. */
    private static Map<String, Integer> serverPorts(MiniCluster cluster) {
        Map<String, Integer> ports = new LinkedHashMap<>();
        ports.put("master", cluster.master().port());
        for (int i = 0; i < cluster.workers().size(); i++) {
            Worker w = cluster.workers().get(i);
            ports.put("worker" + i + " control", w.address().getRpcPort());
            ports.put("worker" + i + " push", w.address().getPushPort());
            ports.put("worker" + i + " fetch", w.address().getFetchPort());
        }
        return ports;
    }

    private static Map<String, String> expectedSubjects(Map<String, Integer> ports, String subject) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String name : ports.keySet()) m.put(name, subject);
        return m;
    }

    /** The subject each port's certificate names, seen by a new TLS connection (closed after its handshake). */
    private static Map<String, String> subjects(Map<String, Integer> ports, Path trustFile) {
        Map<String, String> m = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> p : ports.entrySet()) {
            try (SSLSocket socket =
                    (SSLSocket) trusting(trustFile).getSocketFactory().createSocket("127.0.0.1", p.getValue())) {
                socket.setSoTimeout(20_000);
                socket.startHandshake();
                m.put(
                        p.getKey(),
                        ((X509Certificate) socket.getSession().getPeerCertificates()[0])
                                .getSubjectX500Principal()
                                .getName());
            } catch (Exception e) {
                m.put(p.getKey(), e.toString());
            }
        }
        return m;
    }

    private static SSLContext trusting(Path trustFile) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(trustFile)) {
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                trust.setCertificateEntry("ca" + i++, c);
            }
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        return ssl;
    }
}
