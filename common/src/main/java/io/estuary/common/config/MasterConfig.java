package io.estuary.common.config;

import static io.estuary.common.config.ConfigEntry.Scope.BOTH;

/** Master settings. */
public final class MasterConfig {
    private MasterConfig() {}

    public static final ConfigEntry<String> HOST = ConfigEntry.builder("estuary.master.host", ConfigType.STRING)
            .defaultValue("")
            .doc("Host name or address the master binds and advertises; empty means this machine's host name.")
            .build();

    public static final ConfigEntry<Integer> PORT = ConfigEntry.builder("estuary.master.port", ConfigType.INT)
            .defaultValue("9097")
            .check(ConfigType.port())
            .doc("RPC port of the master. Fixed by default so that workers and clients can find it after a restart.")
            .build();

    public static final ConfigEntry<java.util.List<String>> ENDPOINTS = ConfigEntry.builder(
                    "estuary.master.endpoints", ConfigType.LIST)
            .defaultValue("localhost:9097")
            .scope(BOTH)
            .check(l -> {
                if (l.isEmpty()) return "must name at least one host:port";
                for (String e : l) {
                    int i = e.lastIndexOf(':');
                    if (i <= 0) return "entry '" + e + "' is not host:port";
                    try {
                        int p = Integer.parseInt(e.substring(i + 1));
                        if (p <= 0 || p > 65535) return "entry '" + e + "' has no valid port";
                    } catch (NumberFormatException x) {
                        return "entry '" + e + "' has no valid port";
                    }
                }
                return null;
            })
            .doc("Every master, as comma-separated host:port. Workers, drivers and tools use this list.")
            .build();

    public static final ConfigEntry<Long> WORKER_TIMEOUT = ConfigEntry.builder(
                    "estuary.master.worker.timeout", ConfigType.DURATION_MS)
            .defaultValue("120s")
            .check(ConfigType.positive())
            .doc("A worker that has not sent a heartbeat for this long is declared lost and gets no new slots.")
            .build();

    public static final ConfigEntry<Long> APPLICATION_TIMEOUT = ConfigEntry.builder(
                    "estuary.master.application.timeout", ConfigType.DURATION_MS)
            .defaultValue("300s")
            .check(ConfigType.positive())
            .doc("An application that has not sent a heartbeat for this long is expired; workers delete its data.")
            .build();

    public static final ConfigEntry<Double> REGISTRATION_RATE_PER_HOST = ConfigEntry.builder(
                    "estuary.master.registration.ratePerHost", ConfigType.DOUBLE)
            .defaultValue("10")
            .check(ConfigType.positive())
            .doc("Application registrations per second the leader takes from one client host, on average (a token "
                    + "bucket of registration.burstPerHost). Registering is open to connections without an identity and "
                    + "each one is a Raft entry and a secret kept until the application expires: past this rate the "
                    + "leader answers RETRY_LATER, and drivers retry with a back-off within their wait.")
            .build();

    public static final ConfigEntry<Integer> REGISTRATION_BURST_PER_HOST = ConfigEntry.builder(
                    "estuary.master.registration.burstPerHost", ConfigType.INT)
            .defaultValue("50")
            .check(ConfigType.positive())
            .doc("Application registrations one client host may make at once before registration.ratePerHost "
                    + "applies (a gateway starting many drivers together).")
            .build();

    public static final ConfigEntry<Integer> MAX_REMOVED_APPLICATIONS = ConfigEntry.builder(
                    "estuary.master.state.maxRemovedApplications", ConfigType.INT)
            .defaultValue("10000")
            .check(ConfigType.positive())
            .doc("How many removed (ended or expired) applications the masters remember, newest first, so workers "
                    + "that report their data are told at once to delete it. Data of an application dropped from this "
                    + "record is deleted too, once workers have reported it unknown for estuary.master.application.timeout "
                    + "(with replicated masters; a single master's state starts empty at each restart). Part of the "
                    + "replicated state: give every master the same value.")
            .build();

    public static final ConfigEntry<Integer> MAX_UNREGISTERED_SHUFFLE_RANGES = ConfigEntry.builder(
                    "estuary.master.state.maxUnregisteredShuffleRanges", ConfigType.INT)
            .defaultValue("1000")
            .check(ConfigType.positive())
            .doc(
                    "How many ranges of consecutive unregistered shuffle ids the masters remember per live application, so "
                            + "workers that report a shuffle of one (even after being away) are told at once to delete it. A range "
                            + "holds any number of shuffles; only shuffles still live among unregistered ones split ranges. Past "
                            + "the bound the lowest ranges are dropped, and their shuffles are deleted once workers have reported "
                            + "them unknown for estuary.master.application.timeout (with replicated masters) or when the "
                            + "application ends (a single master). Part of the replicated state: give every master the same value.")
            .build();

    public static final ConfigEntry<Long> LIVENESS_CHECK_INTERVAL = ConfigEntry.builder(
                    "estuary.master.liveness.checkInterval", ConfigType.DURATION_MS)
            .defaultValue("5s")
            .check(ConfigType.positive())
            .doc("How often the master looks for lost workers and expired applications.")
            .build();

    public static final ConfigEntry<String> SLOT_POLICY = ConfigEntry.builder(
                    "estuary.master.slot.policy", ConfigType.STRING)
            .defaultValue("loadaware")
            .check(ConfigType.oneOf("roundrobin", "loadaware"))
            .doc("How partitions are placed on workers and disks. roundrobin: evenly over healthy workers, then "
                    + "over each worker's healthy disks. loadaware: more partitions to disks with low flush and fetch "
                    + "latency, few active slots and much free space; slow disks get none (see slowDiskThreshold).")
            .build();

    public static final ConfigEntry<Long> SLOW_DISK_THRESHOLD = ConfigEntry.builder(
                    "estuary.master.slot.slowDiskThreshold", ConfigType.DURATION_MS)
            .defaultValue("200ms")
            .check(ConfigType.positive())
            .doc("loadaware: a disk whose average flush or fetch latency passes this gets no new slots, within the "
                    + "cap of maxSlowDiskFraction.")
            .build();

    public static final ConfigEntry<Double> MAX_SLOW_DISK_FRACTION = ConfigEntry.builder(
                    "estuary.master.slot.maxSlowDiskFraction", ConfigType.DOUBLE)
            .defaultValue("0.3")
            .check(v -> v >= 0 && v <= 1 ? null : "must be between 0 and 1")
            .doc("loadaware: at most this fraction of all disks is ever excluded for being slow (the slowest first), "
                    + "so a cluster-wide slowdown never leaves no disk to write to.")
            .build();

    public static final ConfigEntry<Integer> MAX_WORKERS_PER_APP = ConfigEntry.builder(
                    "estuary.master.slot.maxWorkersPerApplication", ConfigType.INT)
            .defaultValue("500")
            .check(ConfigType.positive())
            .doc("The most workers one application's shuffles are placed on, bounding the connections each "
                    + "worker gets from each application's executors.")
            .build();

    public static final ConfigEntry<Long> SLOT_LEASE_DURATION = ConfigEntry.builder(
                    "estuary.master.slot.leaseDuration", ConfigType.DURATION_MS)
            .defaultValue("10s")
            .check(ConfigType.nonNegative())
            .doc("How long a slot lease lets a driver place its shuffles itself, without a master round trip each: "
                    + "the lease is a placement this master chose (its policy, load, exclusions and "
                    + "estuary.master.slot.maxWorkersPerApplication), and each placement made by it is recorded here "
                    + "afterwards. Shorter follows changes of load and membership sooner; 0 turns leases off (drivers "
                    + "ask for each shuffle's slots).")
            .build();

    private static final String QUOTA_SYNTAX = " Written as name=value parts: bytes, files, shuffles, slots (location "
            + "copies), pushRate (bytes per second), each 0 or absent for no limit; policy=refuse|wait with maxWait "
            + "(what a shuffle over the quota does); overBytes=warn|stop (what running applications over the bytes "
            + "limit meet), e.g. 'bytes=2t,shuffles=200,policy=wait,maxWait=10min'. Empty: no limit. Operators set a "
            + "scope's own quota at run time (`estuary quota set`, kept in the masters' replicated state), which "
            + "replaces this default for that scope (docs/tenancy.md). Every master of a group needs the same value.";

    public static final ConfigEntry<String> QUOTA_CLUSTER = ConfigEntry.builder(
                    "estuary.master.quota.cluster", ConfigType.STRING)
            .defaultValue("")
            .doc("The cluster's quota, on what all applications together hold." + QUOTA_SYNTAX)
            .build();

    public static final ConfigEntry<String> QUOTA_TENANT = ConfigEntry.builder(
                    "estuary.master.quota.tenant", ConfigType.STRING)
            .defaultValue("")
            .doc("Each tenant's quota (estuary.client.tenant), unless operators set one of its own." + QUOTA_SYNTAX)
            .build();

    public static final ConfigEntry<String> QUOTA_USER = ConfigEntry.builder(
                    "estuary.master.quota.user", ConfigType.STRING)
            .defaultValue("")
            .doc("Each user's quota, unless operators set one of its own." + QUOTA_SYNTAX)
            .build();

    public static final ConfigEntry<java.util.List<String>> RACKS = ConfigEntry.builder(
                    "estuary.master.racks", ConfigType.LIST)
            .defaultValue("")
            .check(l -> {
                for (String e : l) if (!e.matches("[^=]+=[^=]+")) return "entry '" + e + "' is not host=rack";
                return null;
            })
            .doc("Topology as host=rack pairs. When given, a partition's replica goes to a worker on another rack "
                    + "whenever one is available (always to another worker).")
            .build();

    public static final ConfigEntry<java.util.List<String>> HA_NODES = ConfigEntry.builder(
                    "estuary.master.ha.nodes", ConfigType.LIST)
            .defaultValue("")
            .check(l -> {
                for (String n : l) {
                    if (!n.matches("[A-Za-z0-9_.-]+=[^:=]+:\\d+:\\d+"))
                        return "entry '" + n + "' is not id=host:rpcPort:raftPort";
                }
                return null;
            })
            .doc("The masters of a highly available group, comma-separated as id=host:rpcPort:raftPort (3 or 5 of "
                    + "them). With entries, each master's state is replicated with Raft (Apache Ratis) under "
                    + "estuary.master.ha.dir, and this master's host and port come from its entry. One entry: a single "
                    + "master that keeps its state (applications and their sealed secrets, placements) on disk, so its "
                    + "restart loses nothing. Empty: a single master that keeps its state in memory.")
            .build();

    public static final ConfigEntry<String> HA_ID = ConfigEntry.builder("estuary.master.ha.id", ConfigType.STRING)
            .defaultValue("")
            .doc("This master's id in estuary.master.ha.nodes.")
            .build();

    public static final ConfigEntry<String> HA_DIR = ConfigEntry.builder("estuary.master.ha.dir", ConfigType.STRING)
            .defaultValue("/tmp/estuary-master-ratis")
            .doc("Where this master keeps its Raft log and snapshots. Losing it is survivable: the master rejoins "
                    + "and receives a snapshot from the leader.")
            .build();

    public static final ConfigEntry<Long> HA_ELECTION_TIMEOUT = ConfigEntry.builder(
                    "estuary.master.ha.electionTimeout", ConfigType.DURATION_MS)
            .defaultValue("1s")
            .check(ConfigType.positive())
            .doc("Raft election timeout (minimum; the maximum is twice this). A leader that stops answering for "
                    + "this long is replaced.")
            .build();

    public static final ConfigEntry<Long> HA_SNAPSHOT_THRESHOLD = ConfigEntry.builder(
                    "estuary.master.ha.snapshotThreshold", ConfigType.LONG)
            .defaultValue("10000")
            .check(ConfigType.positive())
            .doc("Log entries applied since the last snapshot that trigger a new one (after which the log is purged).")
            .build();

    public static final ConfigEntry<Long> HA_SUBMIT_TIMEOUT = ConfigEntry.builder(
                    "estuary.master.ha.submitTimeout", ConfigType.DURATION_MS)
            .defaultValue("10s")
            .check(ConfigType.positive())
            .doc("How long the leader waits for a change to be committed by a quorum before the request fails "
                    + "(callers retry, bounded by estuary.client.master.wait).")
            .build();

    public static final ConfigEntry<Integer> HTTP_PORT = ConfigEntry.builder("estuary.master.http.port", ConfigType.INT)
            .defaultValue("9095")
            .check(ConfigType.port())
            .doc("Port of the master's admin HTTP endpoint (JSON status under /api, Prometheus metrics at /metrics), "
                    + "bound on the master's host.")
            .build();

    public static final ConfigEntry<Integer> WORKER_FAILURE_EXCLUDE_THRESHOLD = ConfigEntry.builder(
                    "estuary.master.workerFailure.excludeThreshold", ConfigType.INT)
            .defaultValue("2")
            .check(ConfigType.positive())
            .doc("A worker reported failing by this many distinct applications within workerFailure.window is "
                    + "excluded from placement for workerFailure.excludeGrace. More than one by default: a single "
                    + "application's reports may stem from its own network or setup, and it already avoids the worker "
                    + "itself. 1 lets one application's report exclude a worker for everyone.")
            .build();

    public static final ConfigEntry<Long> WORKER_FAILURE_WINDOW = ConfigEntry.builder(
                    "estuary.master.workerFailure.window", ConfigType.DURATION_MS)
            .defaultValue("60s")
            .check(ConfigType.positive())
            .doc("How long an application's failure report about a worker counts towards "
                    + "workerFailure.excludeThreshold.")
            .build();

    public static final ConfigEntry<Long> WORKER_FAILURE_EXCLUDE_GRACE = ConfigEntry.builder(
                    "estuary.master.workerFailure.excludeGrace", ConfigType.DURATION_MS)
            .defaultValue("5min")
            .check(ConfigType.positive())
            .doc("How long a worker excluded for failure reports stays out of placement before it is taken back "
                    + "(checked every liveness.checkInterval). An operator's exclusion or decommission is never lifted "
                    + "this way.")
            .build();

    public static final ConfigEntry<Double> WORKER_FAILURE_MAX_EXCLUDED_FRACTION = ConfigEntry.builder(
                    "estuary.master.workerFailure.maxExcludedFraction", ConfigType.DOUBLE)
            .defaultValue("0.3")
            .check(v -> v >= 0 && v <= 1 ? null : "must be between 0 and 1")
            .doc("At most this fraction of the registered workers (at least one) is excluded on failure reports "
                    + "alone, so a fault between clients and workers (a switch) that makes applications report every "
                    + "worker cannot empty the cluster. Past it, a reported worker is excluded only if its own heartbeats "
                    + "show trouble (late, or a disk not healthy). Never are the last two workers that can take new slots "
                    + "excluded this way.")
            .build();

    static void touch() {}
}
