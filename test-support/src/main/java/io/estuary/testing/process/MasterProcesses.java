package io.estuary.testing.process;

import io.estuary.testing.Waits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Masters as separate JVMs on loopback: a Raft group, so a test can kill -9 one, or a single master
 * ({@link #single}). Each is started with {@code io.estuary.master.Master} and {@code -Destuary.*} settings, the way
 * sbin/ starts it. Readiness (who leads, how many workers registered) comes from each master's {@code /metrics}, so
 * this class needs no JSON library; {@link #get} hands a test the admin views' JSON to read with its own. Not
 * thread-safe.
 */
public final class MasterProcesses implements AutoCloseable {
    private final Process[] processes;
    private final int[] httpPorts;
    private final List<String> rpcEndpoints = new ArrayList<>();
    private final String nodes;
    private final Path dir;
    /** Per master: the class path it starts from (null: this build's, {@link ServerProcess#serverClassPath()}). */
    private final String[] classPaths;
    /** Whether some master started from an earlier release's class path: then this build's run without auth. */
    private final boolean withEarlierRelease;

    private final List<String> extraSettings;

    /** One master without a Raft group (no HA settings), on free ports. */
    public static MasterProcesses single() throws IOException {
        return new MasterProcesses(1, false);
    }

    /** One master without a Raft group, on free ports, with {@code settings} ({@code key=value}) added. */
    public static MasterProcesses single(String... settings) throws IOException {
        return new MasterProcesses(1, false, new String[1], Arrays.asList(settings));
    }

    /** A Raft group of {@code n} masters. */
    public MasterProcesses(int n) throws IOException {
        this(n, true);
    }

    /**
     * A Raft group of {@code classPaths.size()} masters, master i started from class path i (null: this build's, else
     * e.g. {@code <dist>/jars/*} of an earlier release), each with {@code settings} added.
     */
    public MasterProcesses(List<String> classPaths, String... settings) throws IOException {
        this(classPaths.size(), true, classPaths.toArray(new String[0]), Arrays.asList(settings));
    }

    private MasterProcesses(int n, boolean group) throws IOException {
        this(n, group, new String[n], new ArrayList<>());
    }

    private MasterProcesses(int n, boolean group, String[] classPaths, List<String> extraSettings) throws IOException {
        this.classPaths = classPaths;
        this.withEarlierRelease = Arrays.stream(classPaths).anyMatch(java.util.Objects::nonNull);
        this.extraSettings = extraSettings;
        dir = Files.createTempDirectory("estuary-master-procs");
        processes = new Process[n];
        httpPorts = new int[n];
        List<String> entries = new ArrayList<>();
        int[] free = FreePorts.take(3 * n);
        for (int i = 0; i < n; i++) {
            int rpc = free[3 * i];
            entries.add("m" + i + "=127.0.0.1:" + rpc + ":" + free[3 * i + 1]);
            rpcEndpoints.add("127.0.0.1:" + rpc);
            httpPorts[i] = free[3 * i + 2];
        }
        nodes = group ? String.join(",", entries) : null;
        for (int i = 0; i < n; i++) start(i);
    }

    public int size() {
        return processes.length;
    }

    /** Starts master i (again, after {@link #kill}) on its ports. */
    public void start(int i) throws IOException {
        String rpcPort = rpcEndpoints.get(i).substring(rpcEndpoints.get(i).lastIndexOf(':') + 1);
        List<String> settings = new ArrayList<>(
                nodes != null
                        ? Arrays.asList(
                                "estuary.master.ha.nodes=" + nodes,
                                "estuary.master.ha.id=m" + i,
                                "estuary.master.ha.dir=" + dir.resolve("raft"),
                                "estuary.master.http.port=" + httpPorts[i],
                                "estuary.master.liveness.checkInterval=500ms")
                        : Arrays.asList(
                                "estuary.master.host=127.0.0.1",
                                "estuary.master.port=" + rpcPort,
                                "estuary.master.http.port=" + httpPorts[i],
                                // as the in-process MiniCluster's master, so tests behave alike on either
                                "estuary.master.liveness.checkInterval=1s"));
        if (classPaths[i] == null) settings.addAll(ServerProcess.authSettings(withEarlierRelease, extraSettings));
        settings.addAll(extraSettings);
        String cp = classPaths[i] != null ? classPaths[i] : ServerProcess.serverClassPath();
        processes[i] = ServerProcess.start(
                cp, "io.estuary.master.Master", "256m", new ArrayList<>(), settings, logFile(i), dir);
    }

    /** Master i starts from {@code classPath} (null: this build's) from its next {@link #start} on. */
    public void classPath(int i, String classPath) {
        classPaths[i] = classPath;
    }

    /** The folder of master i's Raft storage (its log and snapshots). */
    public Path raftDir(int i) {
        return dir.resolve("raft").resolve("m" + i);
    }

    /** Master i's operating-system process, or null when it is not running. */
    public Process process(int i) {
        return processes[i];
    }

    /** The masters' RPC endpoints, comma-separated, as clients and workers are given them. */
    public String endpoints() {
        return String.join(",", rpcEndpoints);
    }

    public int httpPort(int i) {
        return httpPorts[i];
    }

    /** GET {@code path} (e.g. {@code /api/status}) of master i: the body, or null while it does not answer. */
    public String get(int i, String path) {
        return ServerProcess.httpGet(httpPorts[i], path);
    }

    /** Whether master i is alive and says it leads ({@code estuary_master_is_leader}). */
    public boolean isLeader(int i) {
        String scrape = processes[i] != null && processes[i].isAlive() ? get(i, "/metrics") : null;
        return scrape != null && PrometheusText.sum(scrape, "estuary_master_is_leader") == 1;
    }

    /** Workers master i knows ({@code estuary_master_workers} over every state), or -1 while it does not answer. */
    public int registeredWorkers(int i) {
        String scrape = processes[i] != null && processes[i].isAlive() ? get(i, "/metrics") : null;
        return scrape == null ? -1 : (int) PrometheusText.sum(scrape, "estuary_master_workers");
    }

    /** Waits (bounded) for a leader among the live masters and returns its index. */
    public int awaitLeader() throws InterruptedException {
        int[] leader = {-1};
        Waits.waitFor(
                () -> {
                    for (int i = 0; i < processes.length; i++) {
                        if (isLeader(i)) {
                            leader[0] = i;
                            return true;
                        }
                    }
                    return false;
                },
                120_000,
                "a leader among the master processes; logs in " + dir);
        return leader[0];
    }

    /** kill -9: the process gets no chance to hand anything over. */
    public void kill(int i) throws InterruptedException {
        if (processes[i] != null) processes[i].destroyForcibly().waitFor();
        processes[i] = null;
    }

    public String log(int i) throws IOException {
        return ServerProcess.read(logFile(i));
    }

    private Path logFile(int i) {
        return dir.resolve("master-" + i + ".log");
    }

    @Override
    public void close() throws Exception {
        for (int i = 0; i < processes.length; i++) kill(i);
        for (int i = 0; i < processes.length; i++) ServerProcess.checkNoLeaks("master " + i, log(i));
    }
}
