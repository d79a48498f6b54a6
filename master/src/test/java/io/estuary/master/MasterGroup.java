package io.estuary.master;

import static io.estuary.testing.Waits.waitFor;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.TlsConfig;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * Three real masters forming a Ratis group on loopback ports, in this JVM; for tests. Close it when done. Unless
 * {@code tune} sets {@code estuary.auth.enabled}, the masters authenticate with a cluster secret of the group's own,
 * which {@link #client()} proves, in permissive mode: tests act for workers and for applications they never
 * registered a secret of (enforcement of that is ApplicationSecretsTest's).
 */
final class MasterGroup implements AutoCloseable {
    final Master[] masters = new Master[3];
    final List<String> rpcEndpoints = new ArrayList<>();
    final TransportClientFactory clients;
    private final List<TransportClientFactory> clusterClients = new ArrayList<>();
    private final Path dir;
    private final Path secretFile;
    private final UnaryOperator<EstuaryConf> tune;
    private final io.estuary.common.time.Clock clock;
    private String nodes;

    MasterGroup(UnaryOperator<EstuaryConf> tune) throws IOException {
        this(tune, io.estuary.common.time.Clock.system());
    }

    /** As above, every master reading {@code clock} (e.g. a ManualClock the test drives). */
    MasterGroup(UnaryOperator<EstuaryConf> tune, io.estuary.common.time.Clock clock) throws IOException {
        this.tune = tune;
        this.clock = clock;
        this.dir = Files.createTempDirectory("estuary-raft");
        this.secretFile = io.estuary.testing.ClusterSecrets.newFile(dir);
        this.clients = new TransportClientFactory(
                new EstuaryConf(),
                "test",
                io.estuary.network.auth.Credentials.cluster(io.estuary.testing.ClusterSecrets.read(secretFile)));
        // Free ports are probed, then bound later: another process may take one in between, so retry with new ones.
        for (int attempt = 0; ; attempt++) {
            List<String> n = new ArrayList<>();
            rpcEndpoints.clear();
            for (int i = 0; i < 3; i++) {
                int rpc = freePort();
                n.add("m" + i + "=127.0.0.1:" + rpc + ":" + freePort());
                rpcEndpoints.add("127.0.0.1:" + rpc);
            }
            nodes = String.join(",", n);
            try {
                for (int i = 0; i < 3; i++) masters[i] = start(i);
                return;
            } catch (IOException | RuntimeException e) {
                for (int i = 0; i < 3; i++) {
                    if (masters[i] != null) masters[i].halt();
                    masters[i] = null;
                }
                if (attempt == 4) throw e;
            }
        }
    }

    private static int freePort() throws IOException {
        return io.estuary.testing.process.FreePorts.take(1)[0]; // outside the ephemeral range (see FreePorts)
    }

    Master start(int i) throws IOException {
        return new Master(conf(i), () -> {}, clock);
    }

    /**
     * The configuration master {@code i} starts with: the group's settings, the test's tuning, and the group's own
     * cluster secret (permissive) unless the tuning decides authentication itself.
     */
    EstuaryConf conf(int i) {
        EstuaryConf conf = new EstuaryConf()
                .set(MasterConfig.HA_NODES, nodes)
                .set(MasterConfig.HA_ID, "m" + i)
                .set(MasterConfig.HA_DIR, dir.toString())
                .set(MasterConfig.HA_ELECTION_TIMEOUT, "300ms")
                .set(MasterConfig.LIVENESS_CHECK_INTERVAL, "200ms")
                .set(MasterConfig.HTTP_PORT, "0");
        EstuaryConf tuned = tune.apply(conf);
        if (!tuned.contains(AuthConfig.ENABLED)) {
            tuned = io.estuary.testing.ClusterSecrets.enable(tuned, secretFile).set(AuthConfig.MODE, "permissive");
        }
        return tuned;
    }

    /** The Raft port of master {@code i}. */
    int raftPort(int i) {
        String node = nodes.split(",")[i];
        return Integer.parseInt(node.substring(node.lastIndexOf(':') + 1));
    }

    /** The cluster secret the masters use unless the test's tuning sets its own. */
    Path secretFile() {
        return secretFile;
    }

    /** Where the masters keep their Raft logs and snapshots. */
    Path dir() {
        return dir;
    }

    /** A client proving {@code clusterSecret}: the masters then take it for a worker (or any application). */
    MasterClient clusterClient(byte[] clusterSecret) {
        return clusterClient(clusterSecret, new EstuaryConf());
    }

    /** As above, with the client's own configuration (e.g. TLS settings for masters that speak TLS). */
    MasterClient clusterClient(byte[] clusterSecret, EstuaryConf clientConf) {
        TransportClientFactory f = new TransportClientFactory(
                        clientConf, "test-cluster", io.estuary.network.auth.Credentials.cluster(clusterSecret))
                .withTls(io.estuary.network.tls.ClientTls.fromConf(clientConf, TlsConfig.Group.INTERNAL));
        clusterClients.add(f);
        return new MasterClient(f, rpcEndpoints);
    }

    MasterClient client() {
        return new MasterClient(clients, rpcEndpoints);
    }

    int awaitLeader() throws InterruptedException {
        int[] leader = {-1};
        waitFor(
                () -> {
                    for (int i = 0; i < 3; i++) {
                        if (masters[i] != null && masters[i].isLeader()) {
                            leader[0] = i;
                            return true;
                        }
                    }
                    return false;
                },
                60_000,
                "a leader is elected");
        return leader[0];
    }

    @Override
    public void close() throws IOException {
        clients.close();
        for (TransportClientFactory f : clusterClients) f.close();
        for (Master m : masters) if (m != null) m.halt();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }
}
