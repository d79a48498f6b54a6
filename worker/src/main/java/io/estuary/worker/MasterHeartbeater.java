package io.estuary.worker;

import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerHeartbeatRequest;
import io.estuary.common.protocol.WorkerHeartbeatResponse;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.network.client.RemoteException;
import io.estuary.network.rpc.MasterClient;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the master informed: registers, then reports disks and held shuffles every interval, registers again
 * when the master no longer knows this worker, and deletes the shuffles the master says have expired.
 */
final class MasterHeartbeater {
  private static final Logger LOG = LoggerFactory.getLogger(MasterHeartbeater.class);

  private final MasterClient master;
  private final Supplier<WorkerInfo> self;
  private final PartitionRegistry registry;
  private final long intervalMs;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
      new NamedThreadFactory("worker-heartbeat"));
  private volatile boolean registered;

  MasterHeartbeater(MasterClient master, Supplier<WorkerInfo> self, PartitionRegistry registry, long intervalMs) {
    this.master = master;
    this.self = self;
    this.registry = registry;
    this.intervalMs = intervalMs;
  }

  void start() {
    timer.execute(this::beat);
    timer.scheduleWithFixedDelay(this::beat, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  /** Sends a heartbeat now (e.g. a disk changed state), besides the regular ones. Does not block. */
  void beatNow() {
    try {
      timer.execute(this::beat);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // shutting down
    }
  }

  boolean registered() {
    return registered;
  }

  private void beat() {
    try {
      if (!registered) {
        master.ask(Request.newBuilder().setRegisterWorker(RegisterWorkerRequest.newBuilder().setWorker(self.get())
            .addAllShuffleKeys(registry.shuffleKeys())), Empty.parser(), intervalMs);
        registered = true;
        LOG.info("Registered with the master");
        return;
      }
      WorkerHeartbeatResponse r = master.ask(Request.newBuilder().setWorkerHeartbeat(WorkerHeartbeatRequest
          .newBuilder().setWorker(self.get()).addAllShuffleKeys(registry.shuffleKeys())),
          WorkerHeartbeatResponse.parser(), intervalMs);
      if (!r.getRegistered()) {
        LOG.warn("The master does not know this worker; registering again");
        registered = false;
        timer.execute(this::beat);
      }
      for (String key : r.getExpiredShuffleKeysList()) {
        LOG.info("Deleting expired shuffle {}", key);
        registry.remove(key);
      }
    } catch (RemoteException | RuntimeException e) {
      LOG.warn("Heartbeat to the master failed: {}", e.getMessage());
    }
  }

  void close() {
    timer.shutdownNow();
  }
}
