package io.estuary.master.state;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.release.Format;
import io.estuary.master.protocol.ApplicationPrincipalBound;
import io.estuary.master.protocol.ApplicationRemoved;
import io.estuary.master.protocol.ApplicationSlots;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.MasterSnapshot;
import io.estuary.master.protocol.ShuffleSlots;
import io.estuary.master.protocol.ShuffleUnregistered;
import io.estuary.master.protocol.SlotsAllocated;
import io.estuary.master.protocol.UnregisteredShuffles;
import io.estuary.master.protocol.WorkerDisksChanged;
import io.estuary.master.protocol.WorkerStateChanged;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Applies {@link MasterCommand}s to {@link MasterState}. Deterministic: the result depends only on the state and the
 * command, never on clocks, randomness or the local machine, so every replica that applies the same log holds the
 * same state. Decisions that need those (slot placement, liveness) are made before a command is logged, and the
 * command carries their outcome.
 */
public final class MasterStateMachine {
    private final MasterState state;
    private long appliedCommands;

    /** With the default bounds of the remembered removals. */
    public MasterStateMachine() {
        this(new EstuaryConf());
    }

    /** With the bounds configured; every master of a group must be given the same ones. */
    public MasterStateMachine(EstuaryConf conf) {
        this(conf.get(MasterConfig.MAX_REMOVED_APPLICATIONS), conf.get(MasterConfig.MAX_UNREGISTERED_SHUFFLE_RANGES));
    }

    MasterStateMachine(int maxRemovedApps, int maxUnregisteredRanges) {
        this.state = new MasterState(maxRemovedApps, maxUnregisteredRanges);
    }

    /**
     * Applies one command. Commands that no longer make sense (a lost worker already gone) are no-ops. A command this
     * master cannot apply as written ({@link CommandFormats#check}) throws before anything changes.
     */
    public synchronized void apply(MasterCommand command) {
        CommandFormats.check(command);
        applyChecked(command);
    }

    private void applyChecked(MasterCommand command) {
        appliedCommands++;
        switch (command.getCommandCase()) {
            case WORKER_REGISTERED: {
                WorkerInfo w = command.getWorkerRegistered().getWorker();
                state.workers.put(WorkerId.of(w.getAddress()), w);
                break;
            }
            case WORKER_LOST: {
                String id = WorkerId.of(command.getWorkerLost().getWorker());
                state.workers.remove(id);
                state.workerStates.remove(id);
                state.workerStateReasons.remove(id);
                break;
            }
            case WORKER_STATE_CHANGED: {
                WorkerStateChanged c = command.getWorkerStateChanged();
                String id = WorkerId.of(c.getWorker());
                if (!state.workers.containsKey(id)) break;
                if (c.getState() == WorkerState.WORKER_ACTIVE) {
                    state.workerStates.remove(id);
                    state.workerStateReasons.remove(id);
                } else {
                    state.workerStates.put(id, c.getState());
                    state.workerStateReasons.put(id, c.getReason());
                }
                break;
            }
            case WORKER_DISKS_CHANGED: {
                WorkerDisksChanged c = command.getWorkerDisksChanged();
                String id = WorkerId.of(c.getWorker());
                WorkerInfo w = state.workers.get(id);
                if (w != null)
                    state.workers.put(
                            id,
                            w.toBuilder()
                                    .clearDisks()
                                    .addAllDisks(c.getDisksList())
                                    .build());
                break;
            }
            case APPLICATION_REGISTERED: {
                String app = command.getApplicationRegistered().getAppId();
                state.applications.computeIfAbsent(app, a -> new TreeMap<>());
                state.recentlyRemoved.remove(app);
                // The first secret registered stays: a second registration with another one is refused by the leader,
                // and of two racing ones the first logged wins (the other's answer says so).
                com.google.protobuf.ByteString sealed =
                        command.getApplicationRegistered().getSealedSecret();
                if (!sealed.isEmpty()) state.sealedSecrets.putIfAbsent(app, sealed);
                if (command.getApplicationRegistered().hasPrincipal()) {
                    state.principals.putIfAbsent(
                            app, command.getApplicationRegistered().getPrincipal());
                }
                break;
            }
            case APPLICATION_PRINCIPAL_BOUND: {
                // The first principal bound stays; one for an application gone meanwhile binds nothing.
                ApplicationPrincipalBound c = command.getApplicationPrincipalBound();
                if (state.applications.containsKey(c.getAppId())) {
                    state.principals.putIfAbsent(c.getAppId(), c.getPrincipal());
                }
                break;
            }
            case APPLICATION_REMOVED: {
                ApplicationRemoved c = command.getApplicationRemoved();
                state.applications.remove(c.getAppId());
                state.sealedSecrets.remove(c.getAppId());
                state.principals.remove(c.getAppId());
                state.unregisteredShuffles.remove(c.getAppId());
                state.partialPlacements.remove(c.getAppId());
                state.recentlyRemoved.put(c.getAppId(), Boolean.TRUE);
                break;
            }
            case QUOTA_SET: {
                io.estuary.master.protocol.Quota q = command.getQuotaSet().getQuota();
                state.quotas.put(MasterState.quotaKey(q.getScope(), q.getName()), q);
                break;
            }
            case QUOTA_REMOVED:
                state.quotas.remove(MasterState.quotaKey(
                        command.getQuotaRemoved().getScope(),
                        command.getQuotaRemoved().getName()));
                break;
            case WORKER_TAGS_CHANGED: {
                io.estuary.master.protocol.WorkerTagsChanged c = command.getWorkerTagsChanged();
                if (c.getAddedCount() == 0 && c.getRemovedCount() == 0) state.workerTags.remove(c.getWorkerId());
                else state.workerTags.put(c.getWorkerId(), c);
                break;
            }
            case DEFAULT_TAGS_SET: {
                io.estuary.master.protocol.DefaultTagsSet c = command.getDefaultTagsSet();
                String key = MasterState.quotaKey(c.getScope(), c.getName());
                if (c.getExpression().isEmpty()) state.defaultTags.remove(key);
                else state.defaultTags.put(key, c);
                break;
            }
            case SLOTS_ALLOCATED:
                slotsAllocated(command.getSlotsAllocated());
                break;
            case SHUFFLE_UNREGISTERED: {
                ShuffleUnregistered c = command.getShuffleUnregistered();
                java.util.Map<Integer, List<PartitionLocation>> shuffles = state.applications.get(c.getAppId());
                if (shuffles == null) break; // the application is gone, and its data with it
                shuffles.remove(c.getShuffleId());
                dropPartial(c.getAppId(), c.getShuffleId());
                // Past the bound the oldest ranges are forgotten; workers still holding them are told once the
                // master finds them unknown.
                state.unregisteredShuffles
                        .computeIfAbsent(c.getAppId(), a -> new ShuffleIdRanges())
                        .add(c.getShuffleId(), state.maxUnregisteredRanges);
                break;
            }
            case BATCH:
                appliedCommands--; // counted per change, not per entry
                for (MasterCommand c : command.getBatch().getCommandsList()) applyChecked(c);
                break;
            default: // check() refused it already
                throw new CommandFormats.UnappliableCommandException(
                        "unknown master command " + command.getCommandCase());
        }
    }

    /**
     * A placement, whole or one part of it. Parts come in order (the leader logs each after the previous committed);
     * a first part starts the placement afresh, a part that does not continue the one begun (an interrupted
     * placement's) is ignored, and the last part publishes it.
     */
    private void slotsAllocated(SlotsAllocated c) {
        // An application removed meanwhile (expired) stays removed; the leader reports the request failed.
        java.util.Map<Integer, List<PartitionLocation>> shuffles = state.applications.get(c.getAppId());
        if (shuffles == null) return;
        if (c.getTotalLocations() == 0) {
            shuffles.put(c.getShuffleId(), new ArrayList<>(c.getLocationsList()));
            dropPartial(c.getAppId(), c.getShuffleId());
            return;
        }
        java.util.Map<Integer, MasterState.PartialPlacement> partial =
                state.partialPlacements.computeIfAbsent(c.getAppId(), a -> new TreeMap<>());
        MasterState.PartialPlacement p = partial.get(c.getShuffleId());
        if (c.getFirstLocation() == 0) {
            p = new MasterState.PartialPlacement(c.getPlacementId(), c.getTotalLocations());
            partial.put(c.getShuffleId(), p);
        } else if (p == null
                || p.id != c.getPlacementId()
                || p.total != c.getTotalLocations()
                || p.locations.size() != c.getFirstLocation()) {
            if (partial.isEmpty()) state.partialPlacements.remove(c.getAppId());
            return;
        }
        p.locations.addAll(c.getLocationsList());
        if (p.locations.size() >= p.total) {
            dropPartial(c.getAppId(), c.getShuffleId());
            if (p.locations.size() == p.total) shuffles.put(c.getShuffleId(), p.locations);
        }
    }

    private void dropPartial(String app, int shuffleId) {
        java.util.Map<Integer, MasterState.PartialPlacement> partial = state.partialPlacements.get(app);
        if (partial == null) return;
        partial.remove(shuffleId);
        if (partial.isEmpty()) state.partialPlacements.remove(app);
    }

    /** Unregistered shuffle ids per application a snapshot of format 1 (release 0.1.0) holds at most. */
    static final int FORMAT_1_UNREGISTERED_PER_APP = 1_000;

    /** The whole state, for a snapshot in this release's format. */
    public MasterSnapshot snapshot() {
        return snapshot(Format.RAFT_SNAPSHOT.version());
    }

    /**
     * The whole state, for a snapshot in {@code format} ({@link Format#RAFT_SNAPSHOT}; the newest every master of the
     * group installs, {@link GroupFormats#snapshotFormat()}). Format 1 (release 0.1.0) lists unregistered shuffles
     * one id at a time, the highest {@value #FORMAT_1_UNREGISTERED_PER_APP} per application, as 0.1.0 kept them;
     * format 2 lists ranges. Deterministic: the same state and format always give the same bytes.
     */
    public synchronized MasterSnapshot snapshot(int format) {
        if (format < Format.RAFT_SNAPSHOT.oldestRead() || format > Format.RAFT_SNAPSHOT.version()) {
            throw new IllegalArgumentException("no snapshot format " + format + " (this release writes "
                    + Format.RAFT_SNAPSHOT.oldestRead() + " to " + Format.RAFT_SNAPSHOT.version() + ")");
        }
        MasterSnapshot.Builder b = MasterSnapshot.newBuilder().addAllWorkers(state.workers.values());
        for (java.util.Map.Entry<String, WorkerState> e : state.workerStates.entrySet()) {
            b.addWorkerStates(WorkerStateChanged.newBuilder()
                    .setWorker(state.workers.get(e.getKey()).getAddress())
                    .setState(e.getValue())
                    .setReason(state.workerStateReasons.getOrDefault(e.getKey(), "")));
        }
        for (java.util.Map.Entry<String, java.util.Map<Integer, List<PartitionLocation>>> app :
                state.applications.entrySet()) {
            ApplicationSlots.Builder a = ApplicationSlots.newBuilder().setAppId(app.getKey());
            com.google.protobuf.ByteString sealed = state.sealedSecrets.get(app.getKey());
            if (sealed != null) a.setSealedSecret(sealed);
            ApplicationPrincipal principal = state.principals.get(app.getKey());
            if (principal != null) a.setPrincipal(principal);
            for (java.util.Map.Entry<Integer, List<PartitionLocation>> sh :
                    app.getValue().entrySet()) {
                a.addShuffles(
                        ShuffleSlots.newBuilder().setShuffleId(sh.getKey()).addAllLocations(sh.getValue()));
            }
            java.util.Map<Integer, MasterState.PartialPlacement> partial = state.partialPlacements.get(app.getKey());
            if (partial != null) {
                for (java.util.Map.Entry<Integer, MasterState.PartialPlacement> sh : partial.entrySet()) {
                    a.addPartial(ShuffleSlots.newBuilder()
                            .setShuffleId(sh.getKey())
                            .addAllLocations(sh.getValue().locations)
                            .setTotalLocations(sh.getValue().total)
                            .setPlacementId(sh.getValue().id));
                }
            }
            b.addApplications(a);
        }
        b.addAllRecentlyRemovedApps(state.recentlyRemoved.keySet());
        // In every format: a master counted as format 1 may only be one that has not answered yet (down, restarting),
        // and leaving them out would lose them from the snapshot; a 0.1.0 master ignores these fields.
        b.addAllQuotas(state.quotas.values());
        b.addAllWorkerTags(state.workerTags.values());
        b.addAllDefaultTags(state.defaultTags.values());
        for (String app : new java.util.TreeSet<>(state.unregisteredShuffles.keySet())) {
            UnregisteredShuffles.Builder u = UnregisteredShuffles.newBuilder().setAppId(app);
            ShuffleIdRanges ids = state.unregisteredShuffles.get(app);
            if (format == 1) {
                u.addAllShuffleIds(ids.highestIds(FORMAT_1_UNREGISTERED_PER_APP));
            } else {
                for (java.util.Map.Entry<Integer, Integer> r : ids.ranges().entrySet()) {
                    u.addShuffleIds(r.getKey()).addRangeEnds(r.getValue());
                }
            }
            b.addUnregistered(u);
        }
        return b.build();
    }

    /** Replaces the whole state with a snapshot's. */
    public synchronized void restore(MasterSnapshot snap) {
        state.workers.clear();
        state.applications.clear();
        state.sealedSecrets.clear();
        state.principals.clear();
        state.recentlyRemoved.clear();
        state.unregisteredShuffles.clear();
        state.partialPlacements.clear();
        state.workerStates.clear();
        state.workerStateReasons.clear();
        state.quotas.clear();
        for (io.estuary.master.protocol.Quota q : snap.getQuotasList()) {
            state.quotas.put(MasterState.quotaKey(q.getScope(), q.getName()), q);
        }
        state.workerTags.clear();
        for (io.estuary.master.protocol.WorkerTagsChanged c : snap.getWorkerTagsList()) {
            state.workerTags.put(c.getWorkerId(), c);
        }
        state.defaultTags.clear();
        for (io.estuary.master.protocol.DefaultTagsSet d : snap.getDefaultTagsList()) {
            state.defaultTags.put(MasterState.quotaKey(d.getScope(), d.getName()), d);
        }
        for (WorkerInfo w : snap.getWorkersList()) state.workers.put(WorkerId.of(w.getAddress()), w);
        for (WorkerStateChanged c : snap.getWorkerStatesList()) {
            state.workerStates.put(WorkerId.of(c.getWorker()), c.getState());
            state.workerStateReasons.put(WorkerId.of(c.getWorker()), c.getReason());
        }
        for (ApplicationSlots a : snap.getApplicationsList()) {
            java.util.Map<Integer, List<PartitionLocation>> shuffles = new TreeMap<>();
            for (ShuffleSlots sh : a.getShufflesList())
                shuffles.put(sh.getShuffleId(), new ArrayList<>(sh.getLocationsList()));
            state.applications.put(a.getAppId(), shuffles);
            if (!a.getSealedSecret().isEmpty()) state.sealedSecrets.put(a.getAppId(), a.getSealedSecret());
            if (a.hasPrincipal()) state.principals.put(a.getAppId(), a.getPrincipal());
            for (ShuffleSlots sh : a.getPartialList()) {
                MasterState.PartialPlacement p =
                        new MasterState.PartialPlacement(sh.getPlacementId(), sh.getTotalLocations());
                p.locations.addAll(sh.getLocationsList());
                state.partialPlacements
                        .computeIfAbsent(a.getAppId(), x -> new TreeMap<>())
                        .put(sh.getShuffleId(), p);
            }
        }
        for (String app : snap.getRecentlyRemovedAppsList()) state.recentlyRemoved.put(app, Boolean.TRUE);
        for (UnregisteredShuffles u : snap.getUnregisteredList()) {
            // A snapshot of an older master lists single ids, without range ends.
            boolean ranges = u.getRangeEndsCount() == u.getShuffleIdsCount();
            ShuffleIdRanges ids = state.unregisteredShuffles.computeIfAbsent(u.getAppId(), a -> new ShuffleIdRanges());
            for (int i = 0; i < u.getShuffleIdsCount(); i++) {
                ids.addRange(u.getShuffleIds(i), ranges ? u.getRangeEnds(i) : u.getShuffleIds(i));
            }
        }
    }

    /** Reads the state consistently with respect to concurrent applies. */
    public synchronized <T> T read(Function<MasterState, T> reader) {
        return reader.apply(state);
    }

    public synchronized long appliedCommands() {
        return appliedCommands;
    }
}
