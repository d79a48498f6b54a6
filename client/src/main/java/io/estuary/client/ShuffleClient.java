package io.estuary.client;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.GetReducerFileGroupRequest;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.MapperEndRequest;
import io.estuary.common.protocol.MapperEndResponse;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RegisterShuffleRequest;
import io.estuary.common.protocol.RegisterShuffleResponse;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.EstuaryException;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import java.io.Closeable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The executor side of Estuary, one per process and shared by all tasks and shuffles: connections to workers and
 * to the driver, the partition locations of each shuffle, and one timer for push retries. Nothing here grows with
 * the number of shuffles except the location cache, which engines clear when a shuffle is removed.
 */
public final class ShuffleClient implements Closeable {
  private final EstuaryConf conf;
  private final TransportClientFactory connections;
  private final ScheduledExecutorService retryTimer;
  private final Map<String, CompletableFuture<List<PartitionLocation>>> locations = new ConcurrentHashMap<>();

  public ShuffleClient(EstuaryConf conf) {
    this.conf = conf;
    this.connections = new TransportClientFactory(conf, "estuary-client");
    this.retryTimer = Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("estuary-push-retry"));
  }

  public EstuaryConf conf() {
    return conf;
  }

  /** Runs a push retry later on the process's one retry thread. */
  public void retryTimerSchedule(Runnable r, long delayMs) {
    try {
      retryTimer.schedule(r, delayMs, java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      java.util.concurrent.ForkJoinPool.commonPool().execute(r); // closing: try once more, off the event loop
    }
  }

  public TransportClient pushClient(WorkerAddress w) throws RemoteException {
    return connections.client(w.getHost(), w.getPushPort());
  }

  public TransportClient fetchClient(WorkerAddress w) throws RemoteException {
    return connections.client(w.getHost(), w.getFetchPort());
  }

  private TransportClient driver(ShuffleSpec spec) throws RemoteException {
    return connections.client(spec.driverHost, spec.driverPort);
  }

  /** The location of every partition; the first caller in this process registers the shuffle with the driver. */
  public List<PartitionLocation> locations(ShuffleSpec spec) {
    String key = spec.appId + "/" + spec.shuffleId;
    CompletableFuture<List<PartitionLocation>> mine = new CompletableFuture<>();
    CompletableFuture<List<PartitionLocation>> f = locations.putIfAbsent(key, mine);
    if (f == null) {
      f = mine;
      try {
        RegisterShuffleResponse r = ControlClient.ask(driver(spec), Request.newBuilder().setRegisterShuffle(
            RegisterShuffleRequest.newBuilder().setShuffleId(spec.shuffleId).setNumMappers(spec.numMappers)
                .setNumPartitions(spec.numPartitions)), RegisterShuffleResponse.parser());
        mine.complete(r.getLocationsList());
      } catch (RemoteException | RuntimeException e) {
        locations.remove(key, mine); // the next task tries again
        mine.completeExceptionally(new EstuaryException("registering " + spec + " failed: " + e.getMessage(), e));
      }
    }
    try {
      return f.join();
    } catch (java.util.concurrent.CompletionException e) {
      throw (RuntimeException) e.getCause();
    }
  }

  /** Reports a finished map attempt; returns the attempt that counts for this map (the first to finish). */
  public int mapperEnd(ShuffleSpec spec, int mapId, int attemptId) throws RemoteException {
    MapperEndResponse r = ControlClient.ask(driver(spec), Request.newBuilder().setMapperEnd(
        MapperEndRequest.newBuilder().setShuffleId(spec.shuffleId).setMapId(mapId).setAttemptId(attemptId)
            .setNumMappers(spec.numMappers).setNumPartitions(spec.numPartitions)), MapperEndResponse.parser());
    return r.getWinningAttemptId();
  }

  /** Where partitions [start, end) were committed, and which attempt of each map counts. Waits for the commit. */
  public GetReducerFileGroupResponse reducerFiles(ShuffleSpec spec, int startPartition, int endPartition)
      throws RemoteException {
    return ControlClient.ask(driver(spec), Request.newBuilder().setGetReducerFileGroup(
        GetReducerFileGroupRequest.newBuilder().setShuffleId(spec.shuffleId).setStartPartition(startPartition)
            .setEndPartition(endPartition).setNumMappers(spec.numMappers).setNumPartitions(spec.numPartitions)), GetReducerFileGroupResponse.parser());
  }

  public void forgetShuffle(String appId, int shuffleId) {
    locations.remove(appId + "/" + shuffleId);
  }

  @Override
  public void close() {
    retryTimer.shutdownNow();
    connections.close();
  }
}
