package io.estuary.common.config;

import static io.estuary.common.config.ConfigEntry.Scope.BOTH;
import static io.estuary.common.config.ConfigEntry.Scope.SERVER;

/**
 * Transport settings, shared by servers and clients (a driver runs a server too: its lifecycle server), so their
 * scope is both unless a declaration says otherwise.
 */
public final class NetworkConfig {
    private NetworkConfig() {}

    public static final ConfigEntry<Long> MAX_FRAME_SIZE = ConfigEntry.builder(
                    "estuary.network.maxFrameSize", ConfigType.BYTES)
            .defaultValue("128m")
            .scope(BOTH)
            .check(v -> v >= 1024 && v <= Integer.MAX_VALUE ? null : "must be between 1k and 2g")
            .doc(
                    "Largest frame a peer may send. A larger frame is refused and its connection closed; the server "
                            + "keeps serving everyone else. A single pushed batch must fit, so keep it above the largest record.")
            .build();

    public static final ConfigEntry<Long> RPC_TIMEOUT = ConfigEntry.builder(
                    "estuary.network.rpc.timeout", ConfigType.DURATION_MS)
            .defaultValue("120s")
            .scope(BOTH)
            .check(ConfigType.positive())
            .doc("How long a caller waits for the answer to a request (RPC, push, chunk fetch) before it fails. A map "
                    + "task waits twice this for a push (the primary waits up to this for its replica), and a reducer "
                    + "waits estuary.client.commit.timeout plus this for the driver to say where its partitions are.")
            .build();

    public static final ConfigEntry<Long> CONNECT_TIMEOUT = ConfigEntry.builder(
                    "estuary.network.connect.timeout", ConfigType.DURATION_MS)
            .defaultValue("10s")
            .scope(BOTH)
            .check(ConfigType.positive())
            .doc("How long opening a connection may take.")
            .build();

    public static final ConfigEntry<Integer> IO_THREADS = ConfigEntry.builder(
                    "estuary.network.io.threads", ConfigType.INT)
            .defaultValue("0")
            .scope(BOTH)
            .check(ConfigType.nonNegative())
            .doc("Netty event-loop threads per server and per client factory; 0 means twice the cores.")
            .build();

    public static final ConfigEntry<Boolean> BIND_WILDCARD = ConfigEntry.builder(
                    "estuary.network.bindWildcard", ConfigType.BOOLEAN)
            .defaultValue("false")
            .doc("Bind server sockets to every interface (0.0.0.0) instead of the configured host. Off by default: "
                    + "a server listens only where it says it does.")
            .build();

    public static final ConfigEntry<Integer> MAX_CONNECTIONS = ConfigEntry.builder(
                    "estuary.network.server.maxConnections", ConfigType.INT)
            .defaultValue("10000")
            .check(ConfigType.positive())
            .doc("Connections one server (a master, or each of a worker's rpc, push and fetch servers, or a driver's "
                    + "lifecycle server) keeps open at once. A connection beyond it is told why (RETRY_LATER) and closed; "
                    + "the open ones are served as before.")
            .build();

    public static final ConfigEntry<Long> IDLE_TIMEOUT = ConfigEntry.builder(
                    "estuary.network.server.idleTimeout", ConfigType.DURATION_MS)
            .defaultValue("10min")
            .check(ConfigType.positive())
            .doc("A server closes a connection that has carried nothing either way for this long, unless it still "
                    + "owes the peer an answer (a push, request or chunk not yet answered). A connection the server has "
                    + "paused reading from (back-pressure) is read once at the timeout: a peer with data waiting stays, a "
                    + "silent one is closed one timeout later, so a peer that sent part of a frame and nothing more cannot "
                    + "hold its bytes (and the pause) for good. Clients reconnect on their next request; a reader whose fetch "
                    + "connection was closed while it was busy elsewhere opens its stream again where it stopped, at no "
                    + "cost to its retry budget (as after estuary.worker.fetch.streamTimeout).")
            .build();

    public static final ConfigEntry<String> VERSION_OVERRIDE = ConfigEntry.builder(
                    "estuary.version.override", ConfigType.STRING)
            .defaultValue("")
            .scope(SERVER)
            .doc(
                    "The version a master or worker reports (admin API, estuary_build_info metric, start-up log, "
                            + "registration with the master) instead of the one it was built as; the environment variable "
                            + "ESTUARY_VERSION does the same when this is empty. For rehearsing a rolling upgrade with one build.")
            .build();

    public static final ConfigEntry<Boolean> HALT_ON_FATAL_ERROR = ConfigEntry.builder(
                    "estuary.network.server.haltOnFatalError", ConfigType.BOOLEAN)
            .defaultValue("true")
            .scope(SERVER)
            .doc("A master or worker started from the command line logs a VirtualMachineError (out of heap, an "
                    + "internal JVM error) raised on any of its threads and halts the process, so that a supervisor "
                    + "restarts it instead of it living on half dead. Running out of direct memory while receiving a "
                    + "push is not fatal (the push is answered RETRY_LATER). Servers embedded in another process (tests, "
                    + "a driver's lifecycle server) never halt it.")
            .build();

    public static final ConfigEntry<Integer> MAX_STRING_BYTES = ConfigEntry.builder(
                    "estuary.network.request.maxStringBytes", ConfigType.INT)
            .defaultValue("1024")
            .scope(BOTH)
            .check(v -> v >= 64 ? null : "must be at least 64")
            .doc("Longest string (in UTF-8 bytes) a request may carry: application ids, user names, host names, "
                    + "shuffle keys in push headers, failure reasons. A longer one is refused with BAD_REQUEST.")
            .build();

    public static final ConfigEntry<Integer> MAX_LIST_ENTRIES = ConfigEntry.builder(
                    "estuary.network.request.maxListEntries", ConfigType.INT)
            .defaultValue("1000000")
            .scope(BOTH)
            .check(ConfigType.positive())
            .doc("Most entries one list in a request may hold: partition locations in a reserve or commit, "
                    + "partitions in a revive, per-partition statistics of a finished map, shuffle keys in a heartbeat. "
                    + "A request with more is refused with BAD_REQUEST. Keep it above maxPartitions times the epochs a "
                    + "worker may hold per shuffle.")
            .build();

    public static final ConfigEntry<Integer> MAX_PARTITIONS = ConfigEntry.builder(
                    "estuary.network.request.maxPartitions", ConfigType.INT)
            .defaultValue("200000")
            .scope(BOTH)
            .check(ConfigType.positive())
            .doc("Most reduce partitions one shuffle may have. The driver refuses to register a larger shuffle and "
                    + "the master to place one (BAD_REQUEST naming this key).")
            .build();

    public static final ConfigEntry<Integer> MAX_MAPPERS = ConfigEntry.builder(
                    "estuary.network.request.maxMappers", ConfigType.INT)
            .defaultValue("100000")
            .scope(BOTH)
            .check(ConfigType.positive())
            .doc("Most map tasks one shuffle may have; the driver refuses a larger one (BAD_REQUEST naming this key).")
            .build();

    static void touch() {}
}
