package io.estuary.tests;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
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

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  WorkerProcesses(int n, String masterEndpoints, String... settings) throws IOException {
    this.dir = Files.createTempDirectory("estuary-worker-procs");
    this.processes = new Process[n];
    this.ports = new int[n][];
    this.masterEndpoints = masterEndpoints;
    this.extraSettings = java.util.Arrays.asList(settings);
    for (int i = 0; i < n; i++) ports[i] = new int[] {freePort(), freePort(), freePort()};
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
    processes[i] = ServerProcess.start("io.estuary.worker.Worker", "384m", settings,
        dir.resolve("worker-" + i + ".log"), dir);
  }

  /** The worker's RPC port: with the host, its identity. */
  int rpcPort(int i) {
    return ports[i][0];
  }

  /** kill -9: the worker gets no chance to finish anything. */
  void kill(int i) throws InterruptedException {
    if (processes[i] != null) processes[i].destroyForcibly().waitFor();
    processes[i] = null;
  }

  /** Starts a killed worker again on the same ports; {@code wipe} empties its disk first (a replaced machine). */
  void restart(int i, boolean wipe) throws IOException {
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
    deleteTree(dir);
  }
}
