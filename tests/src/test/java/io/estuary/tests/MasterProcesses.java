package io.estuary.tests;

import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Masters as separate JVMs on loopback: a Raft group, so a test can kill -9 one, or a single master
 * ({@link #single}). Each is started with {@code io.estuary.master.Master} and {@code -Destuary.*} settings, the way
 * sbin/ starts it. With {@link WorkerProcesses}, the one process harness of the end-to-end tests. Not thread-safe.
 */
final class MasterProcesses implements AutoCloseable {
    private final Process[] processes;
    private final int[] httpPorts;
    private final List<String> rpcEndpoints = new ArrayList<>();
    private final String nodes;
    private final Path dir;

    /** One master without a Raft group (no HA settings), on free ports. */
    static MasterProcesses single() throws IOException {
        return new MasterProcesses(1, false);
    }

    /** A Raft group of {@code n} masters. */
    MasterProcesses(int n) throws IOException {
        this(n, true);
    }

    private MasterProcesses(int n, boolean group) throws IOException {
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

    void start(int i) throws IOException {
        List<String> settings = nodes != null
                ? java.util.Arrays.asList(
                        "estuary.master.ha.nodes=" + nodes,
                        "estuary.master.ha.id=m" + i,
                        "estuary.master.ha.dir=" + dir.resolve("raft"),
                        "estuary.master.http.port=" + httpPorts[i],
                        "estuary.master.liveness.checkInterval=500ms")
                : java.util.Arrays.asList(
                        "estuary.master.host=127.0.0.1",
                        "estuary.master.port="
                                + rpcEndpoints
                                        .get(i)
                                        .substring(rpcEndpoints.get(i).lastIndexOf(':') + 1),
                        "estuary.master.http.port=" + httpPorts[i]);
        processes[i] = ServerProcess.start(
                "io.estuary.master.Master", "256m", settings, dir.resolve("master-" + i + ".log"), dir);
    }

    /** Master i's operating-system process, or null when it is not running. */
    Process process(int i) {
        return processes[i];
    }

    String endpoints() {
        return String.join(",", rpcEndpoints);
    }

    /** GET /api/status of master i, or null while it does not answer. */
    AdminViews.MasterStatus status(int i) {
        try {
            HttpURLConnection c =
                    (HttpURLConnection) new URL("http://127.0.0.1:" + httpPorts[i] + "/api/status").openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(5000);
            try (InputStream in = c.getInputStream()) {
                return AdminJson.read(
                        new String(in.readAllBytes(), StandardCharsets.UTF_8), AdminViews.MasterStatus.class);
            }
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }

    /** Waits (bounded) for a leader among the live masters and returns its index. */
    int awaitLeader() throws InterruptedException {
        long deadline = System.currentTimeMillis() + 120_000;
        while (System.currentTimeMillis() < deadline) {
            for (int i = 0; i < processes.length; i++) {
                AdminViews.MasterStatus s = processes[i] != null && processes[i].isAlive() ? status(i) : null;
                if (s != null && s.role().equals("leader")) return i;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("no leader among the master processes in 120 s; logs in " + dir);
    }

    /** kill -9: the process gets no chance to hand anything over. */
    void kill(int i) throws InterruptedException {
        processes[i].destroyForcibly().waitFor();
        processes[i] = null;
    }

    String log(int i) throws IOException {
        File f = dir.resolve("master-" + i + ".log").toFile();
        return f.exists() ? new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8) : "";
    }

    @Override
    public void close() throws Exception {
        for (Process p : processes) if (p != null) p.destroyForcibly().waitFor();
        for (int i = 0; i < processes.length; i++) ServerProcess.checkNoLeaks("master " + i, log(i));
    }
}
