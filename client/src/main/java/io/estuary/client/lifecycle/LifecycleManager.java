package io.estuary.client.lifecycle;

import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.GetReducerFileGroupRequest;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.MapperEndRequest;
import io.estuary.common.protocol.MapperEndResponse;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.PartitionStats;
import io.estuary.common.protocol.RegisterShuffleRequest;
import io.estuary.common.protocol.RegisterShuffleResponse;
import io.estuary.common.protocol.ReportFetchFailureRequest;
import io.estuary.common.protocol.ReportWorkerFailuresRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReviveRequest;
import io.estuary.common.protocol.ReviveResponse;
import io.estuary.common.protocol.UnregisterApplicationRequest;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.util.EstuaryException;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.rpc.MasterClient;
import io.estuary.network.server.TransportServer;
import io.netty.channel.Channel;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of Estuary, one per application: registers shuffles (slots from the master, reserved on the
 * workers), gives failed or split partitions new epochs, learns which map attempts ended and what they wrote,
 * commits each shuffle on its workers once every map has ended, and tells reducers where their partitions are.
 * Engine shuffles map to generations ({@link ShuffleGenerations}): a rerun after lost data writes a fresh one. Its
 * threads are shared by all shuffles.
 *
 * <p>Each manager is its own Estuary application: its id is the engine's application id plus a suffix drawn when
 * it starts ({@link #appId()}). A driver the cluster manager starts again under the same engine id (a YARN attempt,
 * a restarted pod) so never meets its predecessor's shuffle ids on the master or the workers, whose data expires
 * as any dead application's. Thread-safe.
 */
public final class LifecycleManager implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleManager.class);

  private final String appId;
  private final EstuaryConf conf;
  private final TransportClientFactory connections;
  private final MasterClient master;
  private final long masterWaitMs;
  private final boolean replicate;
  private final TransportServer server;
  private final String host;
  /** Registrations, loss and failure reports, unregistrations: calls to the master, never a commit or a revive. */
  private final ExecutorService work = Executors.newFixedThreadPool(8, new NamedThreadFactory("estuary-lifecycle"));
  /**
   * Commits, one thread each while it runs: a commit may wait for a worker up to the commit timeout, and must hold
   * up neither registrations and revives nor the commits of other shuffles. Few stages end at once.
   */
  private final ExecutorService commits = Executors.newCachedThreadPool(new NamedThreadFactory("estuary-commit"));
  /**
   * Revive drains, one thread per shuffle being revived: without a master quorum the work pool's threads may each
   * wait up to the master wait (reports, unregistrations, new registrations), and revives must not queue behind them.
   */
  private final ExecutorService revives = Executors.newCachedThreadPool(new NamedThreadFactory("estuary-revive"));
  private final AtomicLong commitsFinished = new AtomicLong();
  private final ScheduledExecutorService heartbeat =
      Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("estuary-app-heartbeat"));
  private final ShuffleGenerations generations = new ShuffleGenerations();
  private final FailedWorkers failedWorkers = new FailedWorkers(System::currentTimeMillis);
  private final SlotReserver reserver;
  private final ShuffleCommitter committer;
  private final EpochAllocator epochs;
  private final AtomicBoolean warnedSingleCopy = new AtomicBoolean();
  private volatile IntConsumer shuffleLostListener = id -> { };

  /**
   * Registers the application with a master (failing with a clear message when none answers within
   * {@code estuary.client.master.wait}) and starts listening for executors on {@code host}.
   *
   * @param engineAppId the engine's application (attempt) id; the Estuary application id adds a suffix to it
   */
  public LifecycleManager(String engineAppId, EstuaryConf conf, String host) {
    this.appId = engineAppId + "-" + instanceSuffix();
    this.conf = conf;
    this.host = host;
    this.connections = new TransportClientFactory(conf, "estuary-driver");
    this.master = new MasterClient(connections, conf.get(MasterConfig.ENDPOINTS));
    this.masterWaitMs = conf.get(ClientConfig.MASTER_WAIT);
    this.replicate = conf.get(ClientConfig.PUSH_REPLICATE);
    String user = conf.get(ClientConfig.USER);
    this.reserver = new SlotReserver(connections, appId, user.isEmpty() ? System.getProperty("user.name", "") : user);
    this.committer = new ShuffleCommitter(connections, appId, conf.get(ClientConfig.COMMIT_RETRIES),
        conf.get(ClientConfig.COMMIT_TIMEOUT), conf.get(ClientConfig.COMMIT_UNREACHABLE_TIMEOUT));
    this.epochs = new EpochAllocator(appId, master, masterWaitMs, reserver, failedWorkers, this::reportFailedWorkers,
        replicate, revives);
    try {
      sendHeartbeat();
    } catch (RemoteException e) {
      connections.close();
      work.shutdownNow();
      commits.shutdownNow();
      revives.shutdownNow();
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

  /** Eight random hex digits: two drivers of one engine application never draw the same in practice. */
  private static String instanceSuffix() {
    return String.format("%08x", new java.security.SecureRandom().nextInt());
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

  /** The Estuary application id: the engine's application id, a dash and this manager's own suffix. */
  public String appId() {
    return appId;
  }

  /**
   * Called with the engine's shuffle id when a reader reports that a generation cannot be read, before the reader
   * fails; engines use it to forget the map outputs so that the maps run again (Spark: unregister them).
   */
  public void onShuffleLost(IntConsumer listener) {
    this.shuffleLostListener = listener;
  }

  /**
   * For engines without stage attempts (MapReduce): once a generation is lost, the next writer of that engine
   * shuffle starts a fresh generation whatever stage attempt it gives, so a rerun map never writes into the lost
   * one. Only sound when every writer that may still start after a loss is a rerun (MapReduce starts its reducers
   * once every map has ended). Call before tasks start.
   */
  public void rerunsReplaceLostGenerations() {
    generations.replaceLostOnAnyWriter();
  }

  /** Revive requests from executors so far, and the master requests they cost (for tests and metrics). */
  public long reviveRequests() {
    return epochs.reviveRequests();
  }

  public long reviveMasterRequests() {
    return epochs.masterRequests();
  }

  /** Commits that ended (successfully or not) so far (for tests and metrics). */
  public long commitsFinished() {
    return commitsFinished.get();
  }

  /** Partitions given new epochs by the driver itself because no master answered (no quorum). */
  public long reviveDriverPlacements() {
    return epochs.driverPlacements();
  }

  private void reportFailedWorkers(List<WorkerAddress> workers) {
    work.execute(() -> {
      try {
        master.ask(Request.newBuilder().setReportWorkerFailures(ReportWorkerFailuresRequest.newBuilder()
            .setAppId(appId).addAllWorkers(workers).setReason("unreachable from " + appId)), Empty.parser(),
            masterWaitMs);
      } catch (RemoteException | RuntimeException e) {
        LOG.warn("Reporting failed workers {} to the master failed: {}", workers, e.getMessage());
      }
    });
  }

  // ------------------------------------------------------------------ register

  private CompletableFuture<EpochTable> register(ShuffleState s) {
    synchronized (s) {
      CompletableFuture<EpochTable> slots = s.slots;
      if (slots == null) {
        CompletableFuture<EpochTable> created = CompletableFuture.supplyAsync(() -> allocate(s), work);
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

  /** Slots from the master, reserved on their workers; a worker that refuses is avoided and the slots asked again. */
  private EpochTable allocate(ShuffleState s) {
    String last = "";
    for (int attempt = 0; attempt < 3; attempt++) {
      List<PartitionLocation> locations;
      try {
        RequestSlotsResponse r = master.ask(Request.newBuilder().setRequestSlots(RequestSlotsRequest.newBuilder()
            .setAppId(appId).setShuffleId(s.shuffleId).setNumPartitions(s.numPartitions).setReplicate(replicate)
            .addAllExcludedWorkers(failedWorkers.ids())), RequestSlotsResponse.parser(), masterWaitMs);
        locations = r.getLocationsList();
      } catch (RemoteException e) {
        throw new EstuaryException("cannot register " + s + " of " + appId + ": " + e.getMessage(), e);
      }
      if (replicate && !locations.isEmpty() && !locations.get(0).hasPeer()
          && warnedSingleCopy.compareAndSet(false, true)) {
        LOG.warn("{} is replicated, but the cluster has one usable worker: its shuffles keep a single copy", appId);
      }
      Map<WorkerAddress, String> refused = reserver.reserve(s.shuffleId, locations);
      if (refused.isEmpty()) {
        LOG.info("{}: {} partitions on {} workers", s, s.numPartitions,
            WorkerCalls.copiesByWorker(locations).size());
        return new EpochTable(locations);
      }
      last = refused.toString();
      LOG.warn("Reserving slots of {} failed on {}; asking for others", s, refused);
      List<WorkerAddress> fresh = failedWorkers.add(refused.keySet());
      if (!fresh.isEmpty()) reportFailedWorkers(fresh);
    }
    throw new EstuaryException("cannot register " + s + " of " + appId + ": workers kept refusing the slots: "
        + last);
  }

  // ------------------------------------------------------------------ commit

  private void commit(ShuffleState s) {
    CompletableFuture<EpochTable> slots;
    synchronized (s) {
      slots = s.slots;
    }
    if (slots == null) { // no map wrote anything
      List<PartitionFiles.Builder> none = new ArrayList<>();
      for (int p = 0; p < s.numPartitions; p++) none.add(PartitionFiles.newBuilder().setPartitionId(p));
      s.commit.complete(none);
      return;
    }
    slots.thenAcceptAsync(table -> {
      long t0 = System.nanoTime();
      List<PartitionLocation> all = table.all();
      try {
        s.commit.complete(committer.commit(s.shuffleId, s.numPartitions, all));
      } finally {
        commitsFinished.incrementAndGet();
      }
      LOG.info("{} committed ({} locations) in {} ms", s, all.size(), (System.nanoTime() - t0) / 1_000_000);
    }, commits).exceptionally(e -> {
      LOG.error("Commit of {} failed", s, e);
      s.commit.completeExceptionally(cause(e));
      return null;
    });
  }

  // ------------------------------------------------------------------ requests from executors

  private final class Handler extends ControlRpcHandler {
    Handler() {
      super("estuary lifecycle manager of " + appId, io.estuary.network.rpc.RequestLimits.from(conf));
    }

    @Override
    protected void handle(Channel channel, Request request, Reply reply) {
      switch (request.getPayloadCase()) {
        case REGISTER_SHUFFLE: {
          RegisterShuffleRequest r = request.getRegisterShuffle();
          ShuffleState s = generations.forWriter(r.getShuffleId(), r.getStageId(), r.getStageAttempt(),
              r.getIndeterminate(), r.getNumMappers(), r.getNumPartitions());
          register(s).whenComplete((table, e) -> {
            if (e != null) reply.fail(cause(e));
            else reply.ok(RegisterShuffleResponse.newBuilder().setEstuaryShuffleId(s.shuffleId)
                .addAllLocations(table.currentAll()).build());
          });
          break;
        }
        case REVIVE:
          revive(request.getRevive(), reply);
          break;
        case MAPPER_END:
          mapperEnd(request.getMapperEnd(), reply);
          break;
        case GET_REDUCER_FILE_GROUP:
          fileGroup(request.getGetReducerFileGroup(), reply);
          break;
        case REPORT_FETCH_FAILURE: {
          ReportFetchFailureRequest r = request.getReportFetchFailure();
          ShuffleState s = generations.byId(r.getEstuaryShuffleId());
          if (s != null && s.engineShuffleId == r.getShuffleId() && s.markLost()) {
            LOG.warn("{} cannot be read ({}); its maps run again into a fresh generation", s, r.getReason());
            shuffleLostListener.accept(s.engineShuffleId);
            unregisterAtMaster(s.shuffleId);
          }
          reply.ok(Empty.getDefaultInstance());
          break;
        }
        default:
          throw unsupported(request);
      }
    }
  }

  private void revive(ReviveRequest r, ControlRpcHandler.Reply reply) {
    ShuffleState s = generations.byId(r.getShuffleId());
    if (s == null) {
      throw new StatusException(StatusCode.UNKNOWN_SHUFFLE, "unknown shuffle generation " + r.getShuffleId() + " of "
          + appId);
    }
    CompletableFuture<EpochTable> slots;
    synchronized (s) {
      slots = s.slots;
    }
    if (slots == null || !slots.isDone() || slots.isCompletedExceptionally()) {
      throw new StatusException(StatusCode.RETRY_LATER, s + " is not registered yet");
    }
    epochs.revive(s, slots.join(), r.getPartitionsList(), r.getFailedWorkersList(), r.getSplit())
        .whenComplete((locs, e) -> {
          if (e != null) reply.fail(cause(e));
          else reply.ok(ReviveResponse.newBuilder().addAllLocations(locs).build());
        });
  }

  private void mapperEnd(MapperEndRequest r, ControlRpcHandler.Reply reply) {
    ShuffleState s = r.getShuffleId() >= 0 ? generations.byId(r.getShuffleId())
        : generations.forWriter(r.getEngineShuffleId(), r.getStageId(), r.getStageAttempt(), r.getIndeterminate(),
            r.getNumMappers(), r.getNumPartitions());
    if (s == null) {
      throw new StatusException(StatusCode.UNKNOWN_SHUFFLE, "unknown shuffle generation " + r.getShuffleId() + " of "
          + appId);
    }
    if (r.getShuffleId() >= 0) generations.checkNotSuperseded(s, r.getStageId(), r.getStageAttempt());
    if (r.getMapId() < 0 || r.getMapId() >= s.numMappers) {
      throw new IllegalArgumentException(s + " has " + s.numMappers + " maps; map " + r.getMapId()
          + " does not exist");
    }
    if (r.getAttemptId() < 0) { // -1 marks a map without an ended attempt
      throw new IllegalArgumentException("map " + r.getMapId() + " of " + s + " ended with attempt id "
          + r.getAttemptId());
    }
    for (PartitionStats st : r.getStatsList()) {
      if (st.getPartitionId() < 0 || st.getPartitionId() >= s.numPartitions) {
        throw new IllegalArgumentException(s + " has " + s.numPartitions + " partitions; map " + r.getMapId()
            + " reported partition " + st.getPartitionId());
      }
      if (st.getBatches() < 0 || st.getRecords() < 0) {
        throw new IllegalArgumentException("map " + r.getMapId() + " of " + s + " reported negative counts for "
            + "partition " + st.getPartitionId());
      }
    }
    int winner = s.mapEnded(r.getMapId(), r.getAttemptId(), r.getStatsList());
    if (s.shouldStartCommit()) commit(s);
    reply.ok(MapperEndResponse.newBuilder().setWinningAttemptId(winner).build());
  }

  private void fileGroup(GetReducerFileGroupRequest r, ControlRpcHandler.Reply reply) {
    ShuffleState s = generations.newest(r.getShuffleId());
    if (s == null && r.getNumMappers() == 0) {
      s = generations.forWriter(r.getShuffleId(), 0, 0, false, 0, r.getNumPartitions());
      if (s.shouldStartCommit()) commit(s);
    }
    if (s == null) {
      throw new StatusException(StatusCode.UNKNOWN_SHUFFLE, "unknown shuffle " + r.getShuffleId() + " of " + appId
          + ": no map of it has ended");
    }
    if (r.getStartPartition() < 0 || r.getEndPartition() > s.numPartitions
        || r.getStartPartition() > r.getEndPartition()) {
      throw new IllegalArgumentException("partitions [" + r.getStartPartition() + ", " + r.getEndPartition()
          + ") are outside " + s + "'s " + s.numPartitions + " partitions");
    }
    ShuffleState st = s;
    st.commit.whenComplete((files, e) -> {
      if (st.lost()) {
        reply.fail(StatusCode.SHUFFLE_DATA_LOST, st + " of " + appId + " was lost and is being written again");
      } else if (e != null) {
        // A generation whose commit failed can never be read: drop it, so the reruns write a fresh one.
        if (st.markLost()) {
          shuffleLostListener.accept(st.engineShuffleId);
          unregisterAtMaster(st.shuffleId);
        }
        reply.fail(StatusCode.SHUFFLE_DATA_LOST, st + " of " + appId + " is not readable: " + cause(e).getMessage());
      } else {
        reply.ok(fileGroupOf(st, files, r));
      }
    });
  }

  private static GetReducerFileGroupResponse fileGroupOf(ShuffleState s, List<PartitionFiles.Builder> files,
      GetReducerFileGroupRequest r) {
    int start = r.getStartPartition();
    PartitionFiles.Builder[] range = new PartitionFiles.Builder[r.getEndPartition() - start];
    for (int p = start; p < r.getEndPartition(); p++) range[p - start] = files.get(p).clone();
    int endMap = r.getEndMap() <= 0 && r.getStartMap() == 0 ? s.numMappers : r.getEndMap();
    boolean allCounts = s.setExpected(range, start, r.getStartMap(), endMap);
    GetReducerFileGroupResponse.Builder b = GetReducerFileGroupResponse.newBuilder().setEstuaryShuffleId(s.shuffleId)
        .setIntegrityChecked(true).setBatchCountsOnly(!allCounts);
    for (PartitionFiles.Builder f : range) b.addPartitions(f);
    for (int a : s.mapAttemptsCopy()) b.addMapAttempts(a);
    return b.build();
  }

  private static Throwable cause(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  // ------------------------------------------------------------------ cleanup

  /** Forgets an engine shuffle (every generation); the master tells its workers to delete the data. */
  public void unregisterShuffle(int shuffleId) {
    for (ShuffleState s : generations.remove(shuffleId)) unregisterAtMaster(s.shuffleId);
  }

  private void unregisterAtMaster(int estuaryShuffleId) {
    work.execute(() -> {
      try {
        master.ask(Request.newBuilder().setUnregisterShuffle(UnregisterShuffleRequest.newBuilder().setAppId(appId)
            .setShuffleId(estuaryShuffleId)), Empty.parser(), masterWaitMs);
      } catch (RemoteException e) {
        LOG.warn("Unregistering shuffle {} failed: {}", estuaryShuffleId, e.getMessage());
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
    commits.shutdownNow();
    revives.shutdownNow();
    server.close();
    connections.close();
  }
}
