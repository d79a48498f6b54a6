package io.estuary.testing.process;

import io.estuary.testing.Waits;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.stream.Stream;

/**
 * Workers as separate JVMs on loopback, so a test can kill -9 one and start it again on the same ports, with its
 * disk kept or wiped. Each is started with {@code io.estuary.worker.Worker} and {@code -Destuary.*} settings, the way
 * sbin/ starts it. The masters may be {@link MasterProcesses} or run in the test's JVM: a test says how many workers
 * they know ({@link #awaitRegistered(IntSupplier)}). Not thread-safe.
 */
public final class WorkerProcesses implements AutoCloseable {
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
    /** Per worker: the class path it starts from (null: this build's, {@link ServerProcess#serverClassPath()}). */
    private final String[] classPaths;
    /** Whether some worker started from an earlier release's class path: then this build's run without auth. */
    private final boolean withEarlierRelease;
    /** Storage folders each worker has: {@link #disk(int)}, then {@code -2}, {@code -3}... beside it. */
    private final int disksPerWorker;

    public WorkerProcesses(int n, String masterEndpoints, String... settings) throws IOException {
        this(n, masterEndpoints, Collections.<String>emptyList(), settings);
    }

    /** {@code n} workers with {@code disksPerWorker} storage folders each (placement across a worker's disks). */
    public WorkerProcesses(int n, int disksPerWorker, String masterEndpoints, String... settings) throws IOException {
        this(new String[n], disksPerWorker, masterEndpoints, Collections.<String>emptyList(), settings);
    }

    public WorkerProcesses(int n, String masterEndpoints, List<String> jvmOptions, String... settings)
            throws IOException {
        this(new String[n], 1, masterEndpoints, jvmOptions, settings);
    }

    /**
     * {@code classPaths.size()} workers, worker i started from class path i (null: this build's, else e.g.
     * {@code <dist>/jars/*} of an earlier release).
     */
    public WorkerProcesses(List<String> classPaths, String masterEndpoints, String... settings) throws IOException {
        this(classPaths.toArray(new String[0]), 1, masterEndpoints, Collections.<String>emptyList(), settings);
    }

    private WorkerProcesses(
            String[] classPaths,
            int disksPerWorker,
            String masterEndpoints,
            List<String> jvmOptions,
            String... settings)
            throws IOException {
        if (disksPerWorker < 1) throw new IllegalArgumentException("disksPerWorker " + disksPerWorker + " < 1");
        int n = classPaths.length;
        this.classPaths = classPaths;
        this.withEarlierRelease = Arrays.stream(classPaths).anyMatch(java.util.Objects::nonNull);
        this.disksPerWorker = disksPerWorker;
        this.jvmOptions = jvmOptions;
        this.dir = Files.createTempDirectory("estuary-worker-procs");
        this.processes = new Process[n];
        this.ports = new int[n][];
        this.portsFixed = new boolean[n];
        this.bindRetries = new int[n];
        this.masterEndpoints = masterEndpoints;
        this.extraSettings = Arrays.asList(settings);
        int[] free = FreePorts.take(3 * n);
        for (int i = 0; i < n; i++) ports[i] = new int[] {free[3 * i], free[3 * i + 1], free[3 * i + 2]};
        for (int i = 0; i < n; i++) start(i);
    }

    public int size() {
        return processes.length;
    }

    public Path disk(int i) {
        return dir.resolve("worker-" + i + "-disk");
    }

    /** Worker i's storage folders, comma-separated, {@link #disk(int)} first. */
    private String storageDirs(int i) {
        StringBuilder dirs = new StringBuilder(disk(i).toString());
        for (int d = 2; d <= disksPerWorker; d++)
            dirs.append(',').append(disk(i)).append('-').append(d);
        return dirs.toString();
    }

    /**
     * Partition data files ({@code .data}) on every worker's disks now: whether a job's data reached the workers at
     * all. Files of shuffles unregistered meanwhile may be gone already.
     */
    public long dataFileCount() {
        return countDataFiles(dir.toFile());
    }

    private static long countDataFiles(File folder) {
        File[] children = folder.listFiles(); // null when deleted meanwhile (an expired shuffle's folder)
        if (children == null) return 0;
        long n = 0;
        for (File f : children)
            n += f.isDirectory() ? countDataFiles(f) : f.getName().endsWith(".data") ? 1 : 0;
        return n;
    }

    public void start(int i) throws IOException {
        List<String> settings = new ArrayList<>(Arrays.asList(
                "estuary.master.endpoints=" + masterEndpoints,
                "estuary.worker.host=127.0.0.1",
                "estuary.worker.rpc.port=" + ports[i][0],
                "estuary.worker.push.port=" + ports[i][1],
                "estuary.worker.fetch.port=" + ports[i][2],
                "estuary.worker.http.port=0",
                "estuary.worker.storage.dirs=" + storageDirs(i),
                "estuary.worker.disk.reserve=0",
                "estuary.worker.heartbeat.interval=1s"));
        if (classPaths[i] == null) settings.addAll(ServerProcess.authSettings(withEarlierRelease, extraSettings));
        settings.addAll(extraSettings);
        String cp = classPaths[i] != null ? classPaths[i] : ServerProcess.serverClassPath();
        processes[i] =
                ServerProcess.start(cp, "io.estuary.worker.Worker", "384m", jvmOptions, settings, logFile(i), dir);
    }

    /** Worker i starts from {@code classPath} (null: this build's) from its next start on (e.g. {@link #restart}). */
    public void classPath(int i, String classPath) {
        classPaths[i] = classPath;
    }

    /** The worker's RPC port: with the host, its identity. */
    public int rpcPort(int i) {
        return ports[i][0];
    }

    /** The worker's push port (executors and tasks push to it). */
    public int pushPort(int i) {
        return ports[i][1];
    }

    /** The worker's fetch port (readers open streams on it). */
    public int fetchPort(int i) {
        return ports[i][2];
    }

    /**
     * Waits (bounded) until {@code registered} (the number of workers the master knows) reaches the number of workers;
     * fails at once, with the worker's log, when a worker process has died instead of waiting out the time.
     */
    public void awaitRegistered(IntSupplier registered) throws IOException, InterruptedException {
        awaitRegistered(registered, 60_000);
    }

    /** As {@link #awaitRegistered(IntSupplier)}, bounded by {@code timeoutMs}. */
    public void awaitRegistered(IntSupplier registered, long timeoutMs) throws IOException, InterruptedException {
        try {
            Waits.waitFor(
                    () -> {
                        failIfDied();
                        return registered.getAsInt() >= processes.length;
                    },
                    timeoutMs,
                    "every worker registered with the master");
        } catch (AssertionError e) {
            throw new IllegalStateException(e.getMessage() + "; worker 0's log ends:\n" + tail(log(0)), e);
        }
        registered();
    }

    /**
     * Fails, with its log, when a worker process died before it registered, unless it died because a port was taken
     * (then it is started again, see {@link #restartIfPortTaken}).
     */
    public void failIfDied() {
        try {
            for (int i = 0; i < processes.length; i++) {
                if (processes[i] != null && !processes[i].isAlive() && !restartIfPortTaken(i)) {
                    throw new IllegalStateException("worker " + i + " exited (" + processes[i].exitValue()
                            + ") before it registered; its log ends:\n" + tail(log(i)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted restarting a worker", e);
        }
    }

    /**
     * For worker {@code i}, found dead before it registered: when it died because a port found free was taken
     * meanwhile (e.g. as another connection's ephemeral port) before the worker bound it, starts it again, on new ports
     * unless these are already its identity, and returns true; at most 3 times per worker. False otherwise.
     */
    public boolean restartIfPortTaken(int i) throws IOException, InterruptedException {
        if (!log(i).contains("Address already in use") || bindRetries[i]++ >= 3) return false;
        if (!portsFixed[i]) {
            int[] free = FreePorts.take(3);
            ports[i] = new int[] {free[0], free[1], free[2]};
        } else {
            Thread.sleep(500); // the port's holder is another process: give it time to let go before binding again
        }
        start(i);
        return true;
    }

    /** Every worker registered: its ports are its identity from now on. */
    public void registered() {
        Arrays.fill(portsFixed, true);
        Arrays.fill(bindRetries, 0);
    }

    /** The worker's operating-system process, or null when it is not running. */
    public Process process(int i) {
        return processes[i];
    }

    /** The worker's identity as the master keys it (host and ports). */
    public String workerId(int i) {
        return "127.0.0.1:" + ports[i][0] + ":" + ports[i][1] + ":" + ports[i][2];
    }

    /**
     * SIGTERM, as sbin/stop-worker.sh sends: the worker stops gracefully. Waits (bounded) for the process to exit and
     * returns its exit code.
     */
    public int stop(int i) throws InterruptedException {
        Process p = processes[i];
        processes[i] = null;
        if (p == null) return 0;
        p.destroy();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new IllegalStateException("worker " + i + " did not exit within 60 s of SIGTERM");
        }
        return p.exitValue();
    }

    /** kill -9: the worker gets no chance to finish anything. */
    public void kill(int i) throws InterruptedException {
        if (processes[i] != null) processes[i].destroyForcibly().waitFor();
        processes[i] = null;
    }

    /** Starts a killed worker again on the same ports; {@code wipe} empties its disk first (a replaced machine). */
    public void restart(int i, boolean wipe) throws IOException {
        portsFixed[i] = true;
        if (wipe) {
            for (String d : storageDirs(i).split(",")) deleteTree(java.nio.file.Paths.get(d));
        }
        start(i);
    }

    public String log(int i) throws IOException {
        return ServerProcess.read(logFile(i));
    }

    private Path logFile(int i) {
        return dir.resolve("worker-" + i + ".log");
    }

    private static String tail(String log) {
        return log.substring(Math.max(0, log.length() - 4000));
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
