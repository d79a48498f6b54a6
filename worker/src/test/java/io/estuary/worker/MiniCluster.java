package io.estuary.worker;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.master.Master;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.testing.ClusterSecrets;
import io.estuary.testing.Waits;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A real master and real workers in this JVM, on ephemeral loopback ports, each worker with its own temporary
 * disks. For tests: it waits until every worker has registered before returning.
 *
 * <p>Authentication is on, as by default: unless the given configuration sets {@code estuary.auth.enabled}, the
 * servers prove {@link ClusterSecrets#shared()}, and {@link #clientConf()} an application secret (which a lifecycle manager
 * registers and its shuffle clients prove). {@link #clusterCredentials()} is what a test that acts for the servers
 * proves. A test that sends an application's requests by hand, without registering the application's secret, sets
 * {@code estuary.auth.mode=permissive}.
 */
public final class MiniCluster implements AutoCloseable {
    private final Path root;
    private final Master[] masters;
    private final List<String> masterEndpoints = new ArrayList<>();
    private String haNodes;
    private final List<Worker> workers = new ArrayList<>();
    private final List<String> workerDirs = new ArrayList<>();
    private final EstuaryConf base;
    /** The application secret clients of this cluster prove (base64); null when the given configuration set auth. */
    private final String applicationSecret;

    public MiniCluster(int numWorkers) throws IOException {
        this(numWorkers, 1, new EstuaryConf());
    }

    public MiniCluster(int numWorkers, int disksPerWorker, EstuaryConf overrides) throws IOException {
        this(1, numWorkers, disksPerWorker, overrides);
    }

    /** With {@code numMasters} > 1 the masters form a Raft group on loopback ports. */
    public MiniCluster(int numMasters, int numWorkers, int disksPerWorker, EstuaryConf overrides) throws IOException {
        this(numMasters, numWorkers, disksPerWorker, overrides, null);
    }

    /** Workers only, registering with masters that run elsewhere (e.g. as separate processes). */
    public static MiniCluster withExternalMasters(String masterEndpoints, int numWorkers, EstuaryConf overrides)
            throws IOException {
        return new MiniCluster(0, numWorkers, 1, overrides, masterEndpoints);
    }

    private MiniCluster(
            int numMasters, int numWorkers, int disksPerWorker, EstuaryConf overrides, String externalMasters)
            throws IOException {
        this.root = Files.createTempDirectory("estuary-minicluster");
        if (overrides.contains(AuthConfig.ENABLED)) {
            this.base = overrides.copy();
            this.applicationSecret = null;
        } else {
            // The secret server processes of this JVM share too (MasterProcesses with withExternalMasters).
            this.base = ClusterSecrets.enable(overrides, ClusterSecrets.shared());
            this.applicationSecret = ClusterSecrets.newApplicationSecret();
        }
        this.masters = new Master[numMasters];
        if (externalMasters != null) {
            masterEndpoints.addAll(java.util.Arrays.asList(externalMasters.split(",")));
        } else if (numMasters == 1) {
            masters[0] =
                    new Master(masterConf(0).set(MasterConfig.HOST, "127.0.0.1").set(MasterConfig.PORT, "0"));
            masterEndpoints.add("127.0.0.1:" + masters[0].port());
        } else {
            startRaftGroup(numMasters);
            awaitLeader();
        }
        for (int i = 0; i < numWorkers; i++) {
            StringBuilder dirs = new StringBuilder();
            for (int d = 0; d < disksPerWorker; d++) {
                if (d > 0) dirs.append(',');
                dirs.append(root.resolve("worker" + i + "-disk" + d));
            }
            workerDirs.add(dirs.toString());
            workers.add(new Worker(workerConf(dirs.toString())));
        }
        if (externalMasters == null) {
            awaitWorkers(numWorkers);
        } else {
            Waits.waitUninterruptibly(
                    () -> workers.stream().allMatch(Worker::registeredWithMaster),
                    Duration.ofSeconds(60),
                    "workers registered with the external masters");
        }
    }

    private EstuaryConf masterConf(int i) {
        EstuaryConf c = base.copy().set(MasterConfig.HTTP_PORT, "0");
        if (!c.contains(MasterConfig.LIVENESS_CHECK_INTERVAL)) c.set(MasterConfig.LIVENESS_CHECK_INTERVAL, "1s");
        if (haNodes != null) {
            c.set(MasterConfig.HA_NODES, haNodes)
                    .set(MasterConfig.HA_ID, "m" + i)
                    .set(MasterConfig.HA_DIR, root.resolve("raft").toString());
            if (!c.contains(MasterConfig.HA_ELECTION_TIMEOUT)) c.set(MasterConfig.HA_ELECTION_TIMEOUT, "300ms");
        }
        return c;
    }

    private static int freePort() throws IOException {
        return io.estuary.testing.process.FreePorts.take(1)[0]; // outside the ephemeral range (see FreePorts)
    }

    private void startRaftGroup(int n) throws IOException {
        // Ports are probed, then bound later; another process may take one in between, so retry with new ones.
        for (int attempt = 0; ; attempt++) {
            List<String> nodes = new ArrayList<>();
            masterEndpoints.clear();
            for (int i = 0; i < n; i++) {
                int rpc = freePort();
                nodes.add("m" + i + "=127.0.0.1:" + rpc + ":" + freePort());
                masterEndpoints.add("127.0.0.1:" + rpc);
            }
            haNodes = String.join(",", nodes);
            try {
                for (int i = 0; i < n; i++) masters[i] = new Master(masterConf(i), () -> {});
                return;
            } catch (IOException | RuntimeException e) {
                for (int i = 0; i < n; i++) {
                    if (masters[i] != null) masters[i].close();
                    masters[i] = null;
                }
                if (attempt == 4) throw e;
            }
        }
    }

    /** Waits (bounded) for a leader and returns its index. */
    public int awaitLeader() {
        Waits.waitUninterruptibly(() -> leader() >= 0, Duration.ofSeconds(60), "a leader elected");
        return leader();
    }

    /** The index of a master that leads, or -1. */
    private int leader() {
        for (int i = 0; i < masters.length; i++) if (masters[i] != null && masters[i].isLeader()) return i;
        return -1;
    }

    /** Stops master i (as a crash would, without handing leadership over). */
    public void stopMaster(int i) {
        masters[i].halt();
        masters[i] = null;
    }

    /** Starts master i again on its ports and with its Raft directory. */
    public void restartMaster(int i) throws IOException {
        masters[i] = new Master(masterConf(i), () -> {});
    }

    private EstuaryConf workerConf(String dirs) {
        EstuaryConf c = base.copy()
                .set(WorkerConfig.HOST, "127.0.0.1")
                .set(WorkerConfig.RPC_PORT, "0")
                .set(WorkerConfig.PUSH_PORT, "0")
                .set(WorkerConfig.FETCH_PORT, "0")
                .set(WorkerConfig.HTTP_PORT, "0")
                .set(WorkerConfig.STORAGE_DIRS, dirs)
                .set(WorkerConfig.DISK_RESERVE, "0")
                .set(MasterConfig.ENDPOINTS, masterEndpoint());
        if (!c.contains(WorkerConfig.HEARTBEAT_INTERVAL)) c.set(WorkerConfig.HEARTBEAT_INTERVAL, "1s");
        return c;
    }

    /**
     * Stops worker i, gracefully ({@link Worker#stopGracefully()}) or at once ({@link Worker#close()}: its open
     * locations are left uncommitted, as after a crash), and starts it again on the same host, ports and disks.
     * Returns the new worker, which has registered with the master.
     */
    public Worker restartWorker(int i, boolean graceful) {
        return restartWorker(i, graceful, () -> {});
    }

    /** As {@link #restartWorker(int, boolean)}, running {@code whileDown} between the stop and the start. */
    public Worker restartWorker(int i, boolean graceful, Runnable whileDown) {
        Worker old = workers.get(i);
        if (graceful) old.stopGracefully();
        else old.close();
        whileDown.run();
        io.estuary.common.protocol.WorkerAddress a = old.address();
        Worker w = new Worker(workerConf(workerDirs.get(i))
                .set(WorkerConfig.RPC_PORT, String.valueOf(a.getRpcPort()))
                .set(WorkerConfig.PUSH_PORT, String.valueOf(a.getPushPort()))
                .set(WorkerConfig.FETCH_PORT, String.valueOf(a.getFetchPort())));
        workers.set(i, w);
        Waits.waitUninterruptibly(w::registeredWithMaster, Duration.ofSeconds(60), "the restarted worker registered");
        return w;
    }

    /**
     * Starts one more worker (one disk) with {@code settings} over the cluster's worker configuration (e.g. its own
     * estuary.worker.tags), waits until the master knows it, and returns it; closed with the cluster.
     */
    public Worker addWorker(EstuaryConf settings) throws IOException {
        String dirs = root.resolve("worker" + workers.size() + "-disk0").toString();
        EstuaryConf c = workerConf(dirs);
        for (java.util.Map.Entry<String, String> e : settings.toMap().entrySet()) c.set(e.getKey(), e.getValue());
        workerDirs.add(dirs);
        Worker w = new Worker(c);
        workers.add(w);
        if (masters.length > 0) awaitWorkers(workers.size());
        return w;
    }

    /** Waits (bounded) until the leading master knows this many workers. */
    public void awaitWorkers(int n) {
        Waits.waitUninterruptibly(
                () -> master().state(s -> s.workers().size()) >= n,
                Duration.ofSeconds(60),
                n + " workers registered with the leading master");
    }

    /** Every master's RPC endpoint, comma-separated: what estuary.master.endpoints should say. */
    public String masterEndpoint() {
        return String.join(",", masterEndpoints);
    }

    /** The leading master (the only one, without HA). */
    public Master master() {
        return masters[awaitLeader()];
    }

    public Master master(int i) {
        return masters[i];
    }

    public List<Worker> workers() {
        return workers;
    }

    public Path root() {
        return root;
    }

    /** Files of partition data under every worker's disks. */
    public long dataFileCount() {
        return dataFiles().size();
    }

    /**
     * Every partition data file on the workers now. Files of expired shuffles go away concurrently: to prove a job
     * wrote nothing, compare sets (no file that was not there before), not counts.
     */
    public Set<File> dataFiles() {
        Set<File> out = new HashSet<>();
        collectDataFiles(root.toFile(), out);
        return out;
    }

    private static void collectDataFiles(File dir, Set<File> out) {
        File[] children = dir.listFiles(); // null when deleted meanwhile (expired shuffles go away concurrently)
        if (children == null) return;
        for (File f : children) {
            if (f.isDirectory()) {
                collectDataFiles(f, out);
            } else if (f.getName().endsWith(".data")) {
                out.add(f);
            }
        }
    }

    /**
     * Client configuration pointing at this cluster; with the harness's authentication, it holds an application
     * secret, as an engine hands one to its driver and executors.
     */
    public EstuaryConf clientConf() {
        EstuaryConf c = base.copy().set(MasterConfig.ENDPOINTS, masterEndpoint());
        if (applicationSecret != null) c.set(AuthConfig.APPLICATION_SECRET, applicationSecret);
        return c;
    }

    /** What a test acting for the servers proves: the cluster secret, or nothing with authentication off. */
    public Credentials clusterCredentials() {
        if (!base.get(AuthConfig.ENABLED)) return Credentials.NONE;
        return Credentials.cluster(
                ClusterSecrets.read(java.nio.file.Paths.get(base.get(AuthConfig.CLUSTER_SECRET_FILE))));
    }

    /** Connections to this cluster's servers proving {@link #clusterCredentials()}; the caller closes them. */
    public TransportClientFactory clusterClients(String name) {
        return new TransportClientFactory(clientConf(), name, clusterCredentials());
    }

    @Override
    public void close() throws IOException {
        for (Worker w : workers) w.close();
        for (Master m : masters) if (m != null) m.halt();
        // A worker may still be deleting a removed shuffle's files meanwhile: what vanishes under the walk is skipped,
        // and the walk is repeated until the root is gone.
        for (int attempt = 0; Files.exists(root); attempt++) {
            if (attempt > 0) sleepQuietly(50);
            if (attempt >= 100) throw new IOException("cannot delete " + root);
            deleteTree(root);
        }
    }

    private static void deleteTree(Path root) throws IOException {
        Files.walkFileTree(root, new java.nio.file.SimpleFileVisitor<Path>() {
            @Override
            public java.nio.file.FileVisitResult visitFile(Path file, java.nio.file.attribute.BasicFileAttributes a)
                    throws IOException {
                Files.deleteIfExists(file);
                return java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof java.nio.file.NoSuchFileException) return java.nio.file.FileVisitResult.CONTINUE;
                throw e;
            }

            @Override
            public java.nio.file.FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e != null && !(e instanceof java.nio.file.NoSuchFileException)) throw e;
                try {
                    Files.deleteIfExists(dir);
                } catch (java.nio.file.DirectoryNotEmptyException late) {
                    // something appeared meanwhile: the next walk takes it
                }
                return java.nio.file.FileVisitResult.CONTINUE;
            }
        });
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
