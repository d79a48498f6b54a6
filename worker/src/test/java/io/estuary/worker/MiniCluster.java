package io.estuary.worker;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.master.Master;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A real master and real workers in this JVM, on ephemeral loopback ports, each worker with its own temporary
 * disks. For tests: it waits until every worker has registered before returning.
 */
public final class MiniCluster implements AutoCloseable {
  private final Path root;
  private final Master master;
  private final List<Worker> workers = new ArrayList<>();
  private final EstuaryConf base;

  public MiniCluster(int numWorkers) throws IOException {
    this(numWorkers, 1, new EstuaryConf());
  }

  public MiniCluster(int numWorkers, int disksPerWorker, EstuaryConf overrides) throws IOException {
    this.root = Files.createTempDirectory("estuary-minicluster");
    this.base = overrides.copy();
    EstuaryConf mconf = base.copy().set(MasterConfig.HOST, "127.0.0.1").set(MasterConfig.PORT, "0");
    if (!mconf.contains(MasterConfig.LIVENESS_CHECK_INTERVAL)) mconf.set(MasterConfig.LIVENESS_CHECK_INTERVAL, "1s");
    this.master = new Master(mconf);
    for (int i = 0; i < numWorkers; i++) {
      StringBuilder dirs = new StringBuilder();
      for (int d = 0; d < disksPerWorker; d++) {
        if (d > 0) dirs.append(',');
        dirs.append(root.resolve("worker" + i + "-disk" + d));
      }
      workers.add(new Worker(workerConf(dirs.toString())));
    }
    awaitWorkers(numWorkers);
  }

  private EstuaryConf workerConf(String dirs) {
    EstuaryConf c = base.copy()
        .set(WorkerConfig.HOST, "127.0.0.1")
        .set(WorkerConfig.RPC_PORT, "0").set(WorkerConfig.PUSH_PORT, "0").set(WorkerConfig.FETCH_PORT, "0")
        .set(WorkerConfig.STORAGE_DIRS, dirs)
        .set(WorkerConfig.DISK_RESERVE, "0")
        .set(MasterConfig.ENDPOINTS, masterEndpoint());
    if (!c.contains(WorkerConfig.HEARTBEAT_INTERVAL)) c.set(WorkerConfig.HEARTBEAT_INTERVAL, "1s");
    return c;
  }

  /** Waits (bounded) until the master knows this many workers. */
  public void awaitWorkers(int n) {
    long deadline = System.currentTimeMillis() + 60_000;
    while (master.state(s -> s.workers().size()) < n) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("workers did not register in 60 s");
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  public String masterEndpoint() {
    return "127.0.0.1:" + master.port();
  }

  public Master master() {
    return master;
  }

  public List<Worker> workers() {
    return workers;
  }

  public Path root() {
    return root;
  }

  /** Files of partition data under every worker's disks. */
  public long dataFileCount() {
    return countDataFiles(root.toFile());
  }

  private static long countDataFiles(File dir) {
    File[] children = dir.listFiles(); // null when deleted meanwhile (expired shuffles go away concurrently)
    if (children == null) return 0;
    long n = 0;
    for (File f : children) n += f.isDirectory() ? countDataFiles(f) : f.getName().endsWith(".data") ? 1 : 0;
    return n;
  }

  /** Client configuration pointing at this cluster. */
  public EstuaryConf clientConf() {
    return base.copy().set(MasterConfig.ENDPOINTS, masterEndpoint());
  }

  @Override
  public void close() throws IOException {
    for (Worker w : workers) w.close();
    master.close();
    try (Stream<Path> s = Files.walk(root)) {
      s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    }
  }
}
