package io.estuary.client.lifecycle;

import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.CommitFilesResponse;
import io.estuary.common.protocol.CommittedPartition;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.GetReducerFileGroupRequest;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.MapperEndRequest;
import io.estuary.common.protocol.MapperEndResponse;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RegisterShuffleRequest;
import io.estuary.common.protocol.RegisterShuffleResponse;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.UnregisterApplicationRequest;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.EstuaryException;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.rpc.MasterClient;
import io.estuary.network.server.TransportServer;
import io.netty.channel.Channel;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of Estuary, one per application: registers shuffles (slots from the master, reserved on the
 * workers), learns which map attempts ended, commits each shuffle on its workers once every map has ended, and
 * tells reducers where their partitions are. Its threads are shared by all shuffles.
 */
public final class LifecycleManager implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);

  private final String appId;
  private final EstuaryConf conf;
  private final TransportClientFactory connections;
  private final MasterClient master;
  private final long masterWaitMs;
  private final TransportServer server;
  private final String host;
  private final ExecutorService work = Executors.newFixedThreadPool(8, new NamedThreadFactory("estuary-lifecycle"));
  private final ScheduledExecutorService heartbeat =
      Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("estuary-app-heartbeat"));
  private final Map<Integer, ShuffleState> shuffles = new ConcurrentHashMap<>();

  /**
   * Registers the application with a master (failing with a clear message when none answers within
   * {@code estuary.client.master.wait}) and starts listening for executors on {@code host}.
   */
  public LifecycleManager(String appId, EstuaryConf conf, String host) {
    this.appId = appId;
    this.conf = conf;
    this.host = host;
    this.connections = new TransportClientFactory(conf, "estuary-driver");
    this.master = new MasterClient(connections, conf.get(MasterConfig.ENDPOINTS));
    this.masterWaitMs = conf.get(ClientConfig.MASTER_WAIT);
    try {
      sendHeartbeat();
    } catch (RemoteException e) {
      connections.close();
      work.shutdownNow();
      heartbeat.shutdownNow();
      throw new EstuaryException("Estuary cannot start for application " + appId + ": " + e.getMessage()
          + ". Check " + MasterConfig.ENDPOINTS.key() + "; Estuary never falls back to another shuffle.", e);
    }
    this.server = new TransportServer(conf, "estuary-lifecycle", host, 0, new Handler());
    long every = conf.get(ClientConfig.APPLICATION_HEARTBEAT_INTERVAL);
    heartbeat.scheduleWithFixedDelay(() -> {
      try {
        sendHeartbeat();
      } catch (RemoteException | RuntimeException e) {
        LOG.warn("Application heartbeat failed: {}", e.getMessage());
      }
    }, every, every, TimeUnit.MILLISECONDS);
    LOG.info("Estuary lifecycle manager for {} listening on {}:{}", appId, host, server.port());
  }

  private void sendHeartbeat() throws RemoteException {
    master.ask(Request.newBuilder().setApplicationHeartbeat(ApplicationHeartbeatRequest.newBuilder().setAppId(appId)),
        Empty.parser(), masterWaitMs);
  }

  public String host() {
    return host;
  }

  public int port() {
    return server.port();
  }

  public String appId() {
    return appId;
  }

  private ShuffleState state(int shuffleId, int numMappers, int numPartitions) {
    return shuffles.computeIfAbsent(shuffleId, id -> new ShuffleState(id, numMappers, numPartitions));
  }

  // ------------------------------------------------------------------ register

  private CompletableFuture<List<PartitionLocation>> register(ShuffleState s) {
    synchronized (s) {
      CompletableFuture<List<PartitionLocation>> slots = s.slots;
      if (slots == null) {
        CompletableFuture<List<PartitionLocation>> created = CompletableFuture.supplyAsync(() -> allocate(s), work);
        s.slots = slots = created;
        created.whenComplete((v, e) -> {
          if (e != null) {
            synchronized (s) {
              if (s.slots == created) s.slots = null; // let a later task try again
            }
          }
        });
      }
      return slots;
    }
  }

  private List<PartitionLocation> allocate(ShuffleState s) {
    try {
      RequestSlotsResponse r = master.ask(Request.newBuilder().setRequestSlots(RequestSlotsRequest.newBuilder()
          .setAppId(appId).setShuffleId(s.shuffleId).setNumPartitions(s.numPartitions)),
          RequestSlotsResponse.parser(), masterWaitMs);
      List<PartitionLocation> locations = r.getLocationsList();
      Map<String, List<PartitionLocation>> byWorker = byWorker(locations);
      List<CompletableFuture<Empty>> reserves = new ArrayList<>();
      for (List<PartitionLocation> locs : byWorker.values()) {
        WorkerAddress w = locs.get(0).getWorker();
        reserves.add(ControlClient.askAsync(connections.client(w.getHost(), w.getRpcPort()),
            Request.newBuilder().setReserveSlots(ReserveSlotsRequest.newBuilder().setAppId(appId)
                .setShuffleId(s.shuffleId).addAllLocations(locs)), Empty.parser()));
      }
      for (CompletableFuture<Empty> f : reserves) io.estuary.network.client.TransportClient.await(f);
      LOG.info("Shuffle {}: {} partitions on {} workers", s.shuffleId, s.numPartitions, byWorker.size());
      return locations;
    } catch (RemoteException e) {
      throw new EstuaryException("cannot register shuffle " + s.shuffleId + " of " + appId + ": " + e.getMessage(), e);
    }
  }

  private static Map<String, List<PartitionLocation>> byWorker(List<PartitionLocation> locations) {
    Map<String, List<PartitionLocation>> out = new LinkedHashMap<>();
    for (PartitionLocation l : locations) {
      WorkerAddress w = l.getWorker();
      out.computeIfAbsent(w.getHost() + ":" + w.getRpcPort(), k -> new ArrayList<>()).add(l);
    }
    return out;
  }

  // ------------------------------------------------------------------ commit

  private void commit(ShuffleState s) {
    CompletableFuture<List<PartitionLocation>> slots;
    synchronized (s) {
      slots = s.slots;
    }
    if (slots == null) { // no map wrote anything
      s.commit.complete(new long[s.numPartitions]);
      return;
    }
    slots.thenAcceptAsync(locations -> {
      try {
        long t0 = System.nanoTime();
        long[] sizes = new long[s.numPartitions];
        List<CompletableFuture<CommitFilesResponse>> calls = new ArrayList<>();
        Map<String, List<PartitionLocation>> byWorker = byWorker(locations);
        for (List<PartitionLocation> locs : byWorker.values()) {
          WorkerAddress w = locs.get(0).getWorker();
          calls.add(ControlClient.askAsync(connections.client(w.getHost(), w.getRpcPort()),
              Request.newBuilder().setCommitFiles(CommitFilesRequest.newBuilder().setAppId(appId)
                  .setShuffleId(s.shuffleId).addAllLocations(locs)), CommitFilesResponse.parser()));
        }
        StringBuilder failures = new StringBuilder();
        int committed = 0;
        for (CompletableFuture<CommitFilesResponse> f : calls) {
          CommitFilesResponse r = io.estuary.network.client.TransportClient.await(f);
          for (CommittedPartition c : r.getCommittedList()) {
            sizes[c.getPartitionId()] += c.getBytes();
            committed++;
          }
          if (r.getFailedCount() > 0) failures.append(r.getFailureReason());
        }
        if (failures.length() > 0 || committed != locations.size()) {
          throw new EstuaryException("commit of shuffle " + s.shuffleId + " failed: " + committed + " of "
              + locations.size() + " partitions committed; " + failures);
        }
        LOG.info("Shuffle {} committed on {} workers in {} ms", s.shuffleId, byWorker.size(),
            (System.nanoTime() - t0) / 1_000_000);
        s.commit.complete(sizes);
      } catch (RemoteException | RuntimeException e) {
        LOG.error("Commit of shuffle {} failed", s.shuffleId, e);
        s.commit.completeExceptionally(e);
      }
    }, work).exceptionally(e -> {
      s.commit.completeExceptionally(e instanceof CompletionException ? e.getCause() : e);
      return null;
    });
  }

  // ------------------------------------------------------------------ requests from executors

  private final class Handler extends ControlRpcHandler {
    Handler() {
      super("estuary lifecycle manager of " + appId);
    }

    @Override
    protected void handle(Channel channel, Request request, Reply reply) {
      switch (request.getPayloadCase()) {
        case REGISTER_SHUFFLE: {
          RegisterShuffleRequest r = request.getRegisterShuffle();
          ShuffleState s = state(r.getShuffleId(), r.getNumMappers(), r.getNumPartitions());
          register(s).whenComplete((locs, e) -> {
            if (e != null) reply.fail(cause(e).getMessage());
            else reply.ok(RegisterShuffleResponse.newBuilder().addAllLocations(locs).build());
          });
          break;
        }
        case MAPPER_END: {
          MapperEndRequest r = request.getMapperEnd();
          ShuffleState s = state(r.getShuffleId(), r.getNumMappers(), r.getNumPartitions());
          if (r.getMapId() < 0 || r.getMapId() >= s.numMappers) {
            throw new IllegalArgumentException("shuffle " + r.getShuffleId() + " has " + s.numMappers
                + " maps; map " + r.getMapId() + " does not exist");
          }
          int winner = s.mapEnded(r.getMapId(), r.getAttemptId());
          if (s.shouldStartCommit()) commit(s);
          reply.ok(MapperEndResponse.newBuilder().setWinningAttemptId(winner).build());
          break;
        }
        case GET_REDUCER_FILE_GROUP: {
          GetReducerFileGroupRequest r = request.getGetReducerFileGroup();
          ShuffleState s = shuffles.get(r.getShuffleId());
          if (s == null && r.getNumMappers() == 0) {
            s = state(r.getShuffleId(), 0, r.getNumPartitions());
            if (s.shouldStartCommit()) commit(s);
          }
          if (s == null) {
            throw new IllegalArgumentException("unknown shuffle " + r.getShuffleId() + " of " + appId
                + ": no map of it has ended");
          }
          ShuffleState st = s;
          if (r.getStartPartition() < 0 || r.getEndPartition() > st.numPartitions
              || r.getStartPartition() > r.getEndPartition()) {
            throw new IllegalArgumentException("partitions [" + r.getStartPartition() + ", " + r.getEndPartition()
                + ") are outside shuffle " + r.getShuffleId() + "'s " + st.numPartitions + " partitions");
          }
          st.commit.whenComplete((sizes, e) -> {
            if (e != null) {
              reply.fail("shuffle " + st.shuffleId + " of " + appId + " is not readable: " + cause(e).getMessage());
              return;
            }
            reply.ok(fileGroup(st, sizes, r.getStartPartition(), r.getEndPartition()));
          });
          break;
        }
        default:
          throw unsupported(request);
      }
    }
  }

  private static GetReducerFileGroupResponse fileGroup(ShuffleState s, long[] sizes, int start, int end) {
    GetReducerFileGroupResponse.Builder b = GetReducerFileGroupResponse.newBuilder();
    List<PartitionLocation> locations = s.slots == null ? null : s.slots.join();
    for (int p = start; p < end; p++) {
      PartitionFiles.Builder pf = PartitionFiles.newBuilder().setPartitionId(p);
      if (locations != null && sizes[p] > 0) pf.addLocations(locations.get(p)).addBytes(sizes[p]);
      b.addPartitions(pf);
    }
    for (int a : s.mapAttemptsCopy()) b.addMapAttempts(a);
    return b.build();
  }

  private static Throwable cause(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  // ------------------------------------------------------------------ cleanup

  /** Forgets a shuffle; the master tells its workers to delete the data. */
  public void unregisterShuffle(int shuffleId) {
    if (shuffles.remove(shuffleId) == null) return;
    work.execute(() -> {
      try {
        master.ask(Request.newBuilder().setUnregisterShuffle(UnregisterShuffleRequest.newBuilder().setAppId(appId)
            .setShuffleId(shuffleId)), Empty.parser(), masterWaitMs);
      } catch (RemoteException e) {
        LOG.warn("Unregistering shuffle {} failed: {}", shuffleId, e.getMessage());
      }
    });
  }

  @Override
  public void close() {
    heartbeat.shutdownNow();
    try {
      master.ask(Request.newBuilder().setUnregisterApplication(UnregisterApplicationRequest.newBuilder()
          .setAppId(appId)), Empty.parser(), Math.min(masterWaitMs, 10_000));
    } catch (RemoteException e) {
      LOG.warn("Unregistering application {} failed: {}; the master will expire it", appId, e.getMessage());
    }
    work.shutdownNow();
    server.close();
    connections.close();
  }
}
