package io.estuary.worker;

import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.util.HostNames;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.network.server.TransportServer;
import io.estuary.worker.fetch.FetchHandler;
import io.estuary.worker.push.PushHandler;
import io.estuary.worker.push.Replicator;
import io.estuary.worker.storage.StorageManager;
import java.io.Closeable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker: three servers (control, push, fetch) over one set of disks. Pushes merge per partition in memory and
 * are flushed by per-disk threads; commits close the files; fetches stream them back in chunks.
 */
public final class Worker implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

  private final StorageManager storage;
  private final PartitionRegistry registry;
  private final TransportServer rpcServer;
  private final TransportServer pushServer;
  private final TransportServer fetchServer;
  private final FetchHandler fetchHandler;
  private final Replicator replicator;
  private final TransportClientFactory masterClients;
  private final MasterHeartbeater heartbeater;
  private final WorkerAddress address;

  public Worker(EstuaryConf conf) {
    String host = HostNames.orLocalHost(conf.get(WorkerConfig.HOST));
    long maxFrame = conf.get(NetworkConfig.MAX_FRAME_SIZE);
    if (conf.get(WorkerConfig.CHUNK_SIZE) + 1024 > maxFrame) {
      // A chunk is at most chunkSize, or one push alone (which already fit in a frame), and goes out as one frame.
      throw new ConfigException(WorkerConfig.CHUNK_SIZE.key() + " (" + conf.get(WorkerConfig.CHUNK_SIZE)
          + ") must stay below " + NetworkConfig.MAX_FRAME_SIZE.key() + " (" + maxFrame + ")");
    }
    this.storage = new StorageManager(conf);
    this.registry = new PartitionRegistry(storage);
    this.fetchHandler = new FetchHandler(registry);
    long softSplit = conf.get(WorkerConfig.SPLIT_SOFT_SIZE);
    long hardSplit = conf.get(WorkerConfig.SPLIT_HARD_SIZE);
    if (hardSplit < softSplit) {
      throw new ConfigException(WorkerConfig.SPLIT_HARD_SIZE.key() + " (" + hardSplit + ") must be at least "
          + WorkerConfig.SPLIT_SOFT_SIZE.key() + " (" + softSplit + ")");
    }
    this.replicator = new Replicator(new TransportClientFactory(conf, "worker-replicate"));
    TransportServer rpc = null;
    TransportServer push = null;
    TransportServer fetch = null;
    try {
      rpc = new TransportServer(conf, "worker-rpc", host, conf.get(WorkerConfig.RPC_PORT),
          new WorkerControlHandler(registry));
      push = new TransportServer(conf, "worker-push", host, conf.get(WorkerConfig.PUSH_PORT),
          new PushHandler(registry, storage.memory(), replicator, softSplit, hardSplit));
      fetch = new TransportServer(conf, "worker-fetch", host, conf.get(WorkerConfig.FETCH_PORT), fetchHandler);
    } catch (RuntimeException e) {
      if (rpc != null) rpc.close();
      if (push != null) push.close();
      fetchHandler.close();
      replicator.close();
      storage.close();
      throw e;
    }
    this.rpcServer = rpc;
    this.pushServer = push;
    this.fetchServer = fetch;
    this.address = WorkerAddress.newBuilder().setHost(host).setRpcPort(rpc.port()).setPushPort(push.port())
        .setFetchPort(fetch.port()).build();
    this.masterClients = new TransportClientFactory(conf, "worker-master-client");
    this.heartbeater = new MasterHeartbeater(new MasterClient(masterClients, conf.get(MasterConfig.ENDPOINTS)), this::info, registry,
        conf.get(WorkerConfig.HEARTBEAT_INTERVAL));
    storage.checker().onTransition(heartbeater::beatNow); // a disk's new state reaches the master at once
    heartbeater.start();
  }

  public WorkerAddress address() {
    return address;
  }

  public WorkerInfo info() {
    return WorkerInfo.newBuilder().setAddress(address).addAllDisks(storage.diskInfos()).build();
  }

  public boolean registeredWithMaster() {
    return heartbeater.registered();
  }

  public PartitionRegistry registry() {
    return registry;
  }

  public long bufferedBytes() {
    return storage.memory().held();
  }

  @Override
  public void close() {
    heartbeater.close();
    masterClients.close();
    rpcServer.close();
    pushServer.close();
    replicator.close();
    fetchServer.close();
    fetchHandler.close();
    storage.close();
  }

  public static void main(String[] args) throws Exception {
    Worker worker = new Worker(EstuaryConf.forServer());
    LOG.info("Estuary worker started: {}", worker.address().toString().replace('\n', ' '));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      LOG.info("Estuary worker stopping");
      worker.close();
      stopped.countDown();
    }, "worker-shutdown"));
    stopped.await();
  }
}
