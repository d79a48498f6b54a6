package io.estuary.tests;

/**
 * One master and some workers, each in its own JVM with the servers' class path
 * ({@code estuary.server.classpath.file}), for tests whose own class path holds an old Spark (whose Netty is not the
 * servers'): {@link MasterProcesses#single} and {@link WorkerProcesses}, waiting until every worker registered.
 * Not thread-safe.
 */
public final class EstuaryProcesses implements AutoCloseable {
  private final MasterProcesses master;
  private final WorkerProcesses workers;

  public EstuaryProcesses(int numWorkers) throws Exception {
    master = MasterProcesses.single();
    WorkerProcesses started = null;
    try {
      started = new WorkerProcesses(numWorkers, masterEndpoint());
      workers = started;
      awaitRegistered();
    } catch (Exception | Error e) {
      try {
        if (started != null) started.close();
      } finally {
        master.close();
      }
      throw e;
    }
  }

  /** Waits (bounded) until the master's status lists every worker; fails at once when a server died. */
  private void awaitRegistered() throws java.io.IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + 90_000;
    while (true) {
      String status = master.status(0);
      boolean all = status != null;
      for (int i = 0; all && i < workers.size(); i++) all = status.contains(workers.workerId(i));
      if (all) {
        workers.registered();
        return;
      }
      if (!master.process(0).isAlive()) {
        throw new IllegalStateException("the master exited; its log:\n" + master.log(0));
      }
      for (int i = 0; i < workers.size(); i++) {
        if (workers.process(i) != null && !workers.process(i).isAlive() && !workers.restartIfPortTaken(i)) {
          throw new IllegalStateException("worker " + i + " exited before it registered; its log:\n" + workers.log(i));
        }
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("workers did not register in 90 s; master status: " + status);
      }
      Thread.sleep(50);
    }
  }

  public String masterEndpoint() {
    return master.endpoints();
  }

  public WorkerProcesses workers() {
    return workers;
  }

  @Override
  public void close() throws Exception {
    try {
      workers.close();
    } finally {
      master.close(); // also fails on a leak the master's log reports
    }
  }
}
