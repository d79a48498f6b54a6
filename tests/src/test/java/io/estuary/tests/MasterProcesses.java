package io.estuary.tests;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Masters of a Raft group as separate JVMs on loopback, so a test can kill -9 one. Each is started with
 * {@code io.estuary.master.Master} and {@code -Destuary.*} settings, the way sbin/ starts it.
 */
final class MasterProcesses implements AutoCloseable {
  private final Process[] processes;
  private final int[] httpPorts;
  private final List<String> rpcEndpoints = new ArrayList<>();
  private final String nodes;
  private final Path dir;

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  MasterProcesses(int n) throws IOException {
    dir = Files.createTempDirectory("estuary-master-procs");
    processes = new Process[n];
    httpPorts = new int[n];
    List<String> entries = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int rpc = freePort();
      entries.add("m" + i + "=127.0.0.1:" + rpc + ":" + freePort());
      rpcEndpoints.add("127.0.0.1:" + rpc);
      httpPorts[i] = freePort();
    }
    nodes = String.join(",", entries);
    for (int i = 0; i < n; i++) start(i);
  }

  void start(int i) throws IOException {
    String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + "/bin/java");
    cmd.add("-Xmx256m");
    cmd.add("-Destuary.master.ha.nodes=" + nodes);
    cmd.add("-Destuary.master.ha.id=m" + i);
    cmd.add("-Destuary.master.ha.dir=" + dir.resolve("raft"));
    cmd.add("-Destuary.master.http.port=" + httpPorts[i]);
    cmd.add("-Destuary.master.liveness.checkInterval=500ms");
    cmd.add("-cp");
    cmd.add(cp);
    cmd.add("io.estuary.master.Master");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("master-" + i + ".log").toFile()));
    pb.environment().put("ESTUARY_CONF_DIR", dir.toString()); // no conf file there: settings come from -D
    processes[i] = pb.start();
  }

  String endpoints() {
    return String.join(",", rpcEndpoints);
  }

  /** GET /api/status of master i, or null while it does not answer. */
  String status(int i) {
    try {
      HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + httpPorts[i] + "/api/status")
          .openConnection();
      c.setConnectTimeout(1000);
      c.setReadTimeout(5000);
      try (InputStream in = c.getInputStream()) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      return null;
    }
  }

  /** Waits (bounded) for a leader among the live masters and returns its index. */
  int awaitLeader() throws InterruptedException {
    long deadline = System.currentTimeMillis() + 120_000;
    while (System.currentTimeMillis() < deadline) {
      for (int i = 0; i < processes.length; i++) {
        String s = processes[i] != null && processes[i].isAlive() ? status(i) : null;
        if (s != null && s.contains("\"role\":\"leader\"")) return i;
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
  }
}
