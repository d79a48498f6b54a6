package io.estuary.testing;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS for tests of engines (Spark, MapReduce) against real servers: one {@link TestCertificates} CA and one
 * certificate it signs for {@code localhost} and {@code 127.0.0.1}, which every server presents, and the settings
 * that turn TLS on as a deployment would (build/lib/cluster.sh does the same for scripts). Servers get the
 * cluster-internal and data port groups; jobs get those two (trusting the CA) and the application group (the driver
 * or ApplicationMaster presents the same certificate on its port, its executors or tasks trust the CA). Admin HTTP
 * stays plain, so the process harness can poll it. No mutual TLS: the servers authenticate clients by the
 * application secret. Immutable once made; safe from any thread.
 */
public final class ClusterTls {
    /** What the servers' TLS settings cover. */
    private static final TlsConfig.Group[] SERVER_GROUPS = {TlsConfig.Group.INTERNAL, TlsConfig.Group.DATA};
    /** What a job's TLS settings cover: the servers' groups and the driver's own port. */
    private static final TlsConfig.Group[] JOB_GROUPS = {
        TlsConfig.Group.INTERNAL, TlsConfig.Group.DATA, TlsConfig.Group.APPLICATION
    };
    /** The subject of the certificate every server presents. */
    public static final String SUBJECT = "CN=estuary-node";

    private final TestCertificates ca;
    private final TestCertificates.Issued node;

    private ClusterTls(TestCertificates ca, TestCertificates.Issued node) {
        this.ca = ca;
        this.node = node;
    }

    /** A new CA and server certificate, their PEM files in {@code dir} (about two seconds: keytool). */
    public static ClusterTls create(Path dir) throws IOException {
        TestCertificates ca = TestCertificates.authority(dir, "estuary-cluster");
        return new ClusterTls(ca, ca.issue("estuary-node"));
    }

    /** The PEM bundle of the CA that signed the servers' certificate. */
    public Path trustFile() {
        return ca.trustFile();
    }

    /**
     * The {@code key=value} settings that turn TLS on for servers started by the process harness
     * ({@link io.estuary.testing.process.ProcessCluster#withSettings}, MasterProcesses, WorkerProcesses).
     */
    public List<String> serverSettings() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> kv : settings(SERVER_GROUPS, "").entrySet()) {
            out.add(kv.getKey() + "=" + kv.getValue());
        }
        return out;
    }

    /** {@code conf} (a copy) with TLS on as {@link #serverSettings()}: for servers run in the test's JVM. */
    public EstuaryConf enableOnServers(EstuaryConf conf) {
        return ca.configure(conf.copy(), node, false, SERVER_GROUPS);
    }

    /**
     * A job's TLS settings, each key with {@code prefix} before it: {@code "spark."} for a SparkConf, {@code ""} for
     * a MapReduce job configuration. The trust bundle for every group; the certificate and key for the application
     * group, whose port the driver (or ApplicationMaster) serves. Every file must be readable by the executors or
     * tasks: here they are on the same machine, under the test's user.
     */
    public Map<String, String> jobSettings(String prefix) {
        return settings(JOB_GROUPS, prefix);
    }

    private Map<String, String> settings(TlsConfig.Group[] groups, String prefix) {
        Map<String, String> out = new LinkedHashMap<>();
        for (TlsConfig.Group g : groups) {
            out.put(prefix + g.enabled.key(), "true");
            out.put(prefix + g.trustFile.key(), ca.trustFile().toString());
            out.put(prefix + g.certFile.key(), node.certFile.toString());
            out.put(prefix + g.keyFile.key(), node.keyFile.toString());
        }
        return out;
    }

    /**
     * Connects to {@code port} on 127.0.0.1 with the JDK's TLS (no Netty, so from any class path, e.g. beside a
     * shaded client), trusting only this CA and checking the host name, and returns the certificate the port
     * presented: proof that it speaks TLS with this cluster's certificate. Fails (an {@link IOException}) when the
     * port answers in plain text or with another certificate. Closes right after the TLS handshake: the server then
     * drops the connection, which never sent its own handshake.
     */
    public X509Certificate peerCertificate(int port) throws IOException {
        SSLContext tls;
        try {
            KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            try (InputStream in = Files.newInputStream(ca.trustFile())) {
                int i = 0;
                for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                    trust.setCertificateEntry("ca-" + i++, c);
                }
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            tls = SSLContext.getInstance("TLS");
            tls.init(null, tmf.getTrustManagers(), null);
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot trust " + ca.trustFile(), e);
        }
        try (SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            s.setSoTimeout(10_000); // a plain server waits for its handshake and would never answer ours
            javax.net.ssl.SSLParameters p = s.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name 127.0.0.1
            s.setSSLParameters(p);
            s.startHandshake();
            return (X509Certificate) s.getSession().getPeerCertificates()[0];
        }
    }
}
