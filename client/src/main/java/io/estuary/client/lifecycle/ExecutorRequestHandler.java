package io.estuary.client.lifecycle;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.GetReducerFileGroupRequest;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.MapperEndRequest;
import io.estuary.common.protocol.MapperEndResponse;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionStats;
import io.estuary.common.protocol.RegisterShuffleRequest;
import io.estuary.common.protocol.RegisterShuffleResponse;
import io.estuary.common.protocol.ReportFetchFailureRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.ReviveRequest;
import io.estuary.common.protocol.ReviveResponse;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.rpc.RequestLimits;
import io.netty.channel.Channel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's answers to its executors: registrations, revives, ends of maps, where partitions were committed,
 * and reports that a generation cannot be read. Checks each request against the shuffle it names (bad ones fail
 * with a typed status, the connection keeps serving) and hands the work to the {@link LifecycleManager} through
 * {@link Driver}. Replies may come later, on whichever thread completes the work. Every request is authorized
 * first: only this application's own identity may make it (a forged end of a map from an anonymous peer or another
 * application is refused and changes nothing). Thread-safe.
 */
final class ExecutorRequestHandler extends ControlRpcHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ExecutorRequestHandler.class);

    /** What the handler asks of the lifecycle manager. */
    interface Driver {
        /** The shuffle's slots, registered once (a failed registration is tried again by the next task). */
        CompletableFuture<EpochTable> register(ShuffleState s);

        /** Starts committing the shuffle on its workers. */
        void commit(ShuffleState s);

        /** The generation cannot be read (already marked lost): the engine reruns its maps, the master drops it. */
        void lost(ShuffleState s);

        /** Throws QUOTA_EXCEEDED when the master stopped the engine shuffle over a quota. */
        default void checkRunning(int engineShuffleId) {}
    }

    private final String appId;
    private final ShuffleGenerations generations;
    private final EpochAllocator epochs;
    private final Driver driver;
    private final Authorizer authorizer;

    ExecutorRequestHandler(
            String appId, EstuaryConf conf, ShuffleGenerations generations, EpochAllocator epochs, Driver driver) {
        this(
                appId,
                conf,
                generations,
                epochs,
                driver,
                Authorizer.of(conf, "estuary lifecycle manager of " + appId, Authorizer.Refusals.NONE));
    }

    ExecutorRequestHandler(
            String appId,
            EstuaryConf conf,
            ShuffleGenerations generations,
            EpochAllocator epochs,
            Driver driver,
            Authorizer authorizer) {
        super("estuary lifecycle manager of " + appId, RequestLimits.from(conf));
        this.authorizer = authorizer;
        this.appId = appId;
        this.generations = generations;
        this.epochs = epochs;
        this.driver = driver;
    }

    @Override
    protected void handle(Channel channel, Request request, Reply reply) {
        authorizer.checkOwnApplication(
                channel, request.getPayloadCase().name().toLowerCase(java.util.Locale.ROOT), appId);
        switch (request.getPayloadCase()) {
            case REGISTER_SHUFFLE: {
                RegisterShuffleRequest r = request.getRegisterShuffle();
                driver.checkRunning(r.getShuffleId());
                ShuffleState s = generations.forWriter(
                        r.getShuffleId(),
                        r.getStageId(),
                        r.getStageAttempt(),
                        r.getIndeterminate(),
                        r.getNumMappers(),
                        r.getNumPartitions());
                driver.register(s).whenComplete((table, e) -> {
                    if (e != null) reply.fail(cause(e));
                    else
                        reply.ok(RegisterShuffleResponse.newBuilder()
                                .setEstuaryShuffleId(s.shuffleId)
                                .addAllLocations(table.currentAll())
                                .build());
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
                    driver.lost(s);
                }
                reply.ok(Empty.getDefaultInstance());
                break;
            }
            default:
                throw unsupported(request);
        }
    }

    private void revive(ReviveRequest r, Reply reply) {
        ShuffleState s = generations.byId(r.getShuffleId());
        if (s == null) {
            throw new StatusException(
                    StatusCode.UNKNOWN_SHUFFLE, "unknown shuffle generation " + r.getShuffleId() + " of " + appId);
        }
        driver.checkRunning(s.engineShuffleId);
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
                    else
                        reply.ok(ReviveResponse.newBuilder()
                                .addAllLocations(locs)
                                .build());
                });
    }

    private void mapperEnd(MapperEndRequest r, Reply reply) {
        ShuffleState s = r.getShuffleId() >= 0
                ? generations.byId(r.getShuffleId())
                : generations.forWriter(
                        r.getEngineShuffleId(),
                        r.getStageId(),
                        r.getStageAttempt(),
                        r.getIndeterminate(),
                        r.getNumMappers(),
                        r.getNumPartitions());
        if (s == null) {
            throw new StatusException(
                    StatusCode.UNKNOWN_SHUFFLE, "unknown shuffle generation " + r.getShuffleId() + " of " + appId);
        }
        if (r.getShuffleId() >= 0) generations.checkNotSuperseded(s, r.getStageId(), r.getStageAttempt());
        if (r.getMapId() < 0 || r.getMapId() >= s.numMappers) {
            throw new IllegalArgumentException(
                    s + " has " + s.numMappers + " maps; map " + r.getMapId() + " does not exist");
        }
        if (r.getAttemptId() < 0) { // -1 marks a map without an ended attempt
            throw new IllegalArgumentException(
                    "map " + r.getMapId() + " of " + s + " ended with attempt id " + r.getAttemptId());
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
        if (s.shouldStartCommit()) driver.commit(s);
        reply.ok(MapperEndResponse.newBuilder().setWinningAttemptId(winner).build());
    }

    private void fileGroup(GetReducerFileGroupRequest r, Reply reply) {
        driver.checkRunning(r.getShuffleId());
        ShuffleState s = generations.newest(r.getShuffleId());
        if (s == null && r.getNumMappers() == 0) {
            s = generations.forWriter(r.getShuffleId(), 0, 0, false, 0, r.getNumPartitions());
            if (s.shouldStartCommit()) driver.commit(s);
        }
        if (s == null) {
            throw new StatusException(
                    StatusCode.UNKNOWN_SHUFFLE,
                    "unknown shuffle " + r.getShuffleId() + " of " + appId + ": no map of it has ended");
        }
        if (r.getStartPartition() < 0
                || r.getEndPartition() > s.numPartitions
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
                if (st.markLost()) driver.lost(st);
                reply.fail(
                        StatusCode.SHUFFLE_DATA_LOST,
                        st + " of " + appId + " is not readable: " + cause(e).getMessage());
            } else {
                reply.ok(fileGroupOf(st, files, r));
            }
        });
    }

    private static GetReducerFileGroupResponse fileGroupOf(
            ShuffleState s, List<PartitionFiles.Builder> files, GetReducerFileGroupRequest r) {
        int start = r.getStartPartition();
        PartitionFiles.Builder[] range = new PartitionFiles.Builder[r.getEndPartition() - start];
        for (int p = start; p < r.getEndPartition(); p++)
            range[p - start] = files.get(p).clone();
        int endMap = r.getEndMap() <= 0 && r.getStartMap() == 0 ? s.numMappers : r.getEndMap();
        boolean allCounts = s.setExpected(range, start, r.getStartMap(), endMap);
        GetReducerFileGroupResponse.Builder b = GetReducerFileGroupResponse.newBuilder()
                .setEstuaryShuffleId(s.shuffleId)
                .setIntegrityChecked(true)
                .setBatchCountsOnly(!allCounts);
        for (PartitionFiles.Builder f : range) b.addPartitions(f);
        for (int a : s.mapAttemptsCopy()) b.addMapAttempts(a);
        return b.build();
    }

    /** The failure a completion wraps. */
    static Throwable cause(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
