package io.estuary.tests;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Workers as separate JVMs on loopback, so a test can kill -9 one and start it again on the same ports, with its
 * disk kept or wiped. Each is started with {@code io.estuary.worker.Worker} and {@code -Destuary.*} settings, the way
 * sbin/ starts it.
 */
final class WorkerProcesses implements AutoCloseable {
    private final Process[] processes;
    private final int[][] ports;
    private final String masterEndpoints;
    private final Path dir;
    private final List<String> extraSettings;
    private final List<String> jvmOptions;
    /** Per worker: whether its ports are its identity already (it registered once, or is restarted on them). */
    private final boolean[] portsFixed;
    /** Per worker: starts that failed because a port was taken meanwhile. */
    private final int[] bindRetries;

    WorkerProcesses(int n, String masterEndpoints, String... settings) throws IOException {
        this(n, masterEndpoints, java.util.Collections.emptyList(), settings);
    }

    WorkerProcesses(int n, String masterEndpoints, List<String> jvmOptions, String... settings) throws IOException {
        this.jvmOptions = jvmOptions;
        this.dir = Files.createTempDirectory("estuary-worker-procs");
        this.processes = new Process[n];
        this.ports = new int[n][];
        this.portsFixed = new boolean[n];
        this.bindRetries = new int[n];
        this.masterEndpoints = masterEndpoints;
        this.extraSettings = java.util.Arrays.asList(settings);
        int[] free = FreePorts.take(3 * n);
        for (int i = 0; i < n; i++) ports[i] = new int[] {free[3 * i], free[3 * i + 1], free[3 * i + 2]};
        for (int i = 0; i < n; i++) start(i);
    }

    int size() {
        return processes.length;
    }

    Path disk(int i) {
        return dir.resolve("worker-" + i + "-disk");
    }

    void start(int i) throws IOException {
        List<String> settings = new ArrayList<>(java.util.Arrays.asList(
                "estuary.master.endpoints=" + masterEndpoints,
                "estuary.worker.host=127.0.0.1",
                "estuary.worker.rpc.port=" + ports[i][0],
                "estuary.worker.push.port=" + ports[i][1],
                "estuary.worker.fetch.port=" + ports[i][2],
                "estuary.worker.http.port=0",
                "estuary.worker.storage.dirs=" + disk(i),
                "estuary.worker.disk.reserve=0",
                "estuary.worker.heartbeat.interval=1s"));
        settings.addAll(extraSettings);
        processes[i] = ServerProcess.start(
                "io.estuary.worker.Worker", "384m", jvmOptions, settings, dir.resolve("worker-" + i + ".log"), dir);
    }

    /** The worker's RPC port: with the host, its identity. */
    int rpcPort(int i) {
        return ports[i][0];
    }

    /**
     * Waits (bounded) until {@code master} knows every worker; fails at once, with the worker's log, when a worker
     * process has died instead of waiting out the time.
     */
    void awaitRegistered(io.estuary.worker.MiniCluster master) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + 60_000;
        while (master.master().state(s -> s.workers().size()) < processes.length) {
            for (int i = 0; i < processes.length; i++) {
                if (processes[i] != null && !processes[i].isAlive()) {
                    String log = log(i);
                    if (restartIfPortTaken(i)) continue;
                    throw new IllegalStateException(
                            "worker " + i + " exited (" + processes[i].exitValue() + ") before it "
                                    + "registered; its log ends:\n" + log.substring(Math.max(0, log.length() - 4000)));
                }
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("workers did not register in 60 s; worker 0's log ends:\n" + log(0));
            }
            Thread.sleep(20);
        }
        registered();
    }

    /**
     * For worker {@code i}, found dead before it registered: when it died because a port found free was taken
     * meanwhile (e.g. as another connection's ephemeral port) before the worker bound it, starts it again, on new ports
     * unless these are already its identity, and returns true; at most 3 times per worker. False otherwise.
     */
    boolean restartIfPortTaken(int i) throws IOException, InterruptedException {
        if (!log(i).contains("Address already in use") || bindRetries[i]++ >= 3) return false;
        if (!portsFixed[i]) {
            int[] free = FreePorts.take(3);
            ports[i] = new int[] {free[0], free[1], free[2]};
        } else {
            Thread.sleep(500);
        }
        start(i);
        return true;
    }

    /** Every worker registered: its ports are its identity from now on. */
    void registered() {
        java.util.Arrays.fill(portsFixed, true);
        java.util.Arrays.fill(bindRetries, 0);
    }

    /** The worker's operating-system process, or null when it is not running. */
    Process process(int i) {
        return processes[i];
    }

    /** The worker's identity as the master keys it (host and ports). */
    String workerId(int i) {
        return "127.0.0.1:" + ports[i][0] + ":" + ports[i][1] + ":" + ports[i][2];
    }

    /**
     * SIGTERM, as sbin/stop-worker.sh sends: the worker stops gracefully. Waits (bounded) for the process to exit and
     * returns its exit code.
     */
    int stop(int i) throws InterruptedException {
        Process p = processes[i];
        processes[i] = null;
        if (p == null) return 0;
        p.destroy();
        if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new IllegalStateException("worker " + i + " did not exit within 60 s of SIGTERM");
        }
        return p.exitValue();
    }

    /** kill -9: the worker gets no chance to finish anything. */
    void kill(int i) throws InterruptedException {
        if (processes[i] != null) processes[i].destroyForcibly().waitFor();
        processes[i] = null;
    }

    /** Starts a killed worker again on the same ports; {@code wipe} empties its disk first (a replaced machine). */
    void restart(int i, boolean wipe) throws IOException {
        portsFixed[i] = true;
        if (wipe) deleteTree(disk(i));
        start(i);
    }

    String log(int i) throws IOException {
        File f = dir.resolve("worker-" + i + ".log").toFile();
        return f.exists() ? new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8) : "";
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    @Override
    public void close() throws Exception {
        for (int i = 0; i < processes.length; i++) kill(i);
        try {
            for (int i = 0; i < processes.length; i++) ServerProcess.checkNoLeaks("worker " + i, log(i));
        } finally {
            deleteTree(dir);
        }
    }
}
