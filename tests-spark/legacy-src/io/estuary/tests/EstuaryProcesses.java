package io.estuary.tests;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * One master and some workers, each in its own JVM with the servers' class path
 * ({@code estuary.server.classpath.file}), for tests whose own class path holds an old Spark (whose Netty is not the
 * servers'). Not thread-safe.
 */
public final class EstuaryProcesses implements AutoCloseable {
    private final Path dir;
    private final Process master;
    private final int masterPort;
    private final int httpPort;
    private final WorkerProcesses workers;

    public EstuaryProcesses(int numWorkers) throws Exception {
        dir = Files.createTempDirectory("estuary-master-proc");
        int[] ports = FreePorts.take(2);
        masterPort = ports[0];
        httpPort = ports[1];
        master = ServerProcess.start(
                "io.estuary.master.Master",
                "256m",
                Arrays.asList(
                        "estuary.master.host=127.0.0.1",
                        "estuary.master.port=" + masterPort,
                        "estuary.master.http.port=" + httpPort),
                dir.resolve("master.log"),
                dir);
        WorkerProcesses started = null;
        try {
            started = new WorkerProcesses(numWorkers, masterEndpoint());
            workers = started;
            awaitRegistered();
        } catch (Exception | Error e) {
            if (started != null) started.close();
            master.destroyForcibly().waitFor();
            throw e;
        }
    }

    /** GET /api/status of the master, or null while it does not answer. */
    private String status() {
        try {
            HttpURLConnection c =
                    (HttpURLConnection) new URL("http://127.0.0.1:" + httpPort + "/api/status").openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(5000);
            try (InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return null;
        }
    }

    /** Waits (bounded) until the master's status lists every worker; fails at once when a server died. */
    private void awaitRegistered() throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + 90_000;
        while (true) {
            String status = status();
            boolean all = status != null;
            for (int i = 0; all && i < workers.size(); i++) all = status.contains(workers.workerId(i));
            if (all) {
                workers.registered();
                return;
            }
            if (!master.isAlive()) {
                throw new IllegalStateException("the master exited; its log:\n" + log(dir.resolve("master.log")));
            }
            for (int i = 0; i < workers.size(); i++) {
                if (workers.process(i) != null && !workers.process(i).isAlive() && !workers.restartIfPortTaken(i)) {
                    throw new IllegalStateException(
                            "worker " + i + " exited before it registered; its log:\n" + workers.log(i));
                }
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("workers did not register in 90 s; master status: " + status);
            }
            Thread.sleep(50);
        }
    }

    private static String log(Path file) throws IOException {
        return Files.exists(file) ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
    }

    public String masterEndpoint() {
        return "127.0.0.1:" + masterPort;
    }

    public WorkerProcesses workers() {
        return workers;
    }

    @Override
    public void close() throws Exception {
        try {
            workers.close();
        } finally {
            master.destroyForcibly().waitFor();
            ServerProcess.checkNoLeaks("master", log(dir.resolve("master.log")));
        }
    }
}
