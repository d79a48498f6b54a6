package io.estuary.master.state;

import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.DiskStatus;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the masters agree on: workers and their disks, applications, and the slots each shuffle holds. Changed only
 * by {@link MasterStateMachine}; readers take a consistent view under the state machine's lock.
 */
public final class MasterState {
    /** Registered, not lost, by {@link WorkerId}. Sorted so every replica iterates in the same order. */
    final Map<String, WorkerInfo> workers = new TreeMap<>();
    /** Workers that are not ACTIVE, with their state. */
    final Map<String, WorkerState> workerStates = new TreeMap<>();
    /**
     * Why each non-ACTIVE worker is in its state. Kept in the agreed state because it tells who decided (an operator
     * or automatic failure detection), so any leader lifts only automatic exclusions.
     */
    final Map<String, String> workerStateReasons = new TreeMap<>();
    /** Application ids currently registered. */
    final Map<String, Map<Integer, List<PartitionLocation>>> applications = new TreeMap<>();
    /**
     * The secret of each registered application that has one (authentication on), sealed under the key every master
     * derives from the cluster secret ({@code ClusterKeys}): the state, its log and its snapshots never hold it in
     * clear. Dropped with the application.
     */
    final Map<String, com.google.protobuf.ByteString> sealedSecrets = new TreeMap<>();
    /**
     * Who runs each application (user, tenant) once bound: at its registration or its first heartbeat, then never
     * changed (the first one applied stays). Dropped with the application.
     */
    final Map<String, ApplicationPrincipal> principals = new TreeMap<>();
    /** Operators' tags on workers, by WorkerId; kept while the worker is away (its id stays the same). */
    final Map<String, io.estuary.master.protocol.WorkerTagsChanged> workerTags = new TreeMap<>();
    /** Default tag expressions of users, tenants and the cluster, by {@link #quotaKey}. */
    final Map<String, io.estuary.master.protocol.DefaultTagsSet> defaultTags = new TreeMap<>();

    /** Operators' quotas, by {@link #quotaKey}. Kept until removed; defaults from the configuration are not here. */
    final Map<String, io.estuary.master.protocol.Quota> quotas = new TreeMap<>();

    /**
     * Applications removed recently, the newest {@link #maxRemovedApps}: workers are told at once to delete their
     * data. One evicted from here is no leak: workers keep reporting its shuffles, which the master knows nothing of,
     * and those expire after the application timeout (see the leader's UnknownShuffles).
     */
    final Map<String, Boolean> recentlyRemoved = new LinkedHashMap<String, Boolean>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> e) {
            return size() > maxRemovedApps;
        }
    };

    /** Bound of {@link #recentlyRemoved} ({@code estuary.master.state.maxRemovedApplications}). */
    final int maxRemovedApps;
    /**
     * Shuffles unregistered while their application lives on, as ranges of ids (at most {@link #maxUnregisteredRanges}
     * per application, see {@link ShuffleIdRanges}): workers are told at their next heartbeat, or when they come back,
     * to delete the data. A range dropped from here expires as an unknown shuffle does (replicated masters), so a
     * long-lived application's state stays bounded without leaking worker data.
     */
    final Map<String, ShuffleIdRanges> unregisteredShuffles = new HashMap<>();

    /** Bound of each {@link #unregisteredShuffles} entry ({@code estuary.master.state.maxUnregisteredShuffleRanges}). */
    final int maxUnregisteredRanges;

    MasterState(int maxRemovedApps, int maxUnregisteredRanges) {
        this.maxRemovedApps = maxRemovedApps;
        this.maxUnregisteredRanges = maxUnregisteredRanges;
    }

    /**
     * Placements logged in several entries whose last part has not been applied yet, by application and shuffle. An
     * interrupted one (the leader failed between parts) stays until the shuffle is placed again, unregistered or its
     * application removed.
     */
    final Map<String, Map<Integer, PartialPlacement>> partialPlacements = new TreeMap<>();

    /** The parts of a placement applied so far. */
    static final class PartialPlacement {
        final long id;
        final int total;
        final List<PartitionLocation> locations = new ArrayList<>();

        PartialPlacement(long id, int total) {
            this.id = id;
            this.total = total;
        }
    }

    public List<WorkerInfo> workers() {
        return new ArrayList<>(workers.values());
    }

    public WorkerInfo worker(String workerId) {
        return workers.get(workerId);
    }

    public WorkerState workerState(String workerId) {
        return workerStates.getOrDefault(workerId, WorkerState.WORKER_ACTIVE);
    }

    /** Why a worker is in its state; "" for ACTIVE workers (and states logged without a reason). */
    public String workerStateReason(String workerId) {
        return workerStateReasons.getOrDefault(workerId, "");
    }

    /** Registered workers that may get new slots. */
    public List<WorkerInfo> activeWorkers() {
        List<WorkerInfo> out = new ArrayList<>();
        for (Map.Entry<String, WorkerInfo> e : workers.entrySet()) {
            if (!workerStates.containsKey(e.getKey())) out.add(e.getValue());
        }
        return out;
    }

    public boolean hasApplication(String appId) {
        return applications.containsKey(appId);
    }

    /** The application's secret as sealed under the cluster-derived key, or null when it registered none. */
    public com.google.protobuf.ByteString sealedSecret(String appId) {
        return sealedSecrets.get(appId);
    }

    /** The application's bound principal, or null while none is (or the application is unknown). */
    public ApplicationPrincipal principal(String appId) {
        return principals.get(appId);
    }

    /** The operators' quota of a scope ("" names the cluster), or null when none is set. */
    public io.estuary.master.protocol.Quota quota(io.estuary.master.protocol.QuotaScope scope, String name) {
        return quotas.get(quotaKey(scope, name));
    }

    /** An operator's tags on a worker, or null when none changed them. */
    public io.estuary.master.protocol.WorkerTagsChanged workerTags(String workerId) {
        return workerTags.get(workerId);
    }

    /** Every worker's tags as operators changed them. */
    public List<io.estuary.master.protocol.WorkerTagsChanged> workerTagChanges() {
        return new ArrayList<>(workerTags.values());
    }

    /** The default expression of a scope ("" when none is set). */
    public String defaultTags(io.estuary.master.protocol.QuotaScope scope, String name) {
        io.estuary.master.protocol.DefaultTagsSet d = defaultTags.get(quotaKey(scope, name));
        return d == null ? "" : d.getExpression();
    }

    /** Every default expression, by scope then name. */
    public List<io.estuary.master.protocol.DefaultTagsSet> defaultTagSets() {
        return new ArrayList<>(defaultTags.values());
    }

    /** Every quota operators set, by scope then name. */
    public List<io.estuary.master.protocol.Quota> quotas() {
        return new ArrayList<>(quotas.values());
    }

    static String quotaKey(io.estuary.master.protocol.QuotaScope scope, String name) {
        return scope.getNumber() + "/" + name;
    }

    public List<String> applicationIds() {
        return new ArrayList<>(applications.keySet());
    }

    /** The locations of a shuffle, or null when none were allocated. */
    public List<PartitionLocation> shuffle(String appId, int shuffleId) {
        Map<Integer, List<PartitionLocation>> shuffles = applications.get(appId);
        return shuffles == null ? null : shuffles.get(shuffleId);
    }

    public Map<Integer, List<PartitionLocation>> shuffles(String appId) {
        Map<Integer, List<PartitionLocation>> s = applications.get(appId);
        return s == null ? Collections.emptyMap() : Collections.unmodifiableMap(s);
    }

    public boolean wasRemoved(String appId) {
        return recentlyRemoved.containsKey(appId);
    }

    public boolean isShuffleUnregistered(String appId, int shuffleId) {
        ShuffleIdRanges s = unregisteredShuffles.get(appId);
        return s != null && s.contains(shuffleId);
    }

    /** Whether the shuffle is placed (or being placed) for a registered application. */
    public boolean isShufflePlaced(String appId, int shuffleId) {
        Map<Integer, List<PartitionLocation>> s = applications.get(appId);
        if (s == null) return false;
        if (s.containsKey(shuffleId)) return true;
        Map<Integer, PartialPlacement> p = partialPlacements.get(appId);
        return p != null && p.containsKey(shuffleId);
    }

    /**
     * Entries remembered of unregistered shuffles, over all applications: ranges of consecutive ids (bounded per
     * application).
     */
    public int unregisteredShuffleCount() {
        int n = 0;
        for (ShuffleIdRanges ids : unregisteredShuffles.values()) n += ids.rangeCount();
        return n;
    }

    static boolean usable(DiskInfo d) {
        return d.getStatus() == DiskStatus.DISK_HEALTHY;
    }
}
