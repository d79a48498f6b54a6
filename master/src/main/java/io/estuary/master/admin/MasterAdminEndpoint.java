package io.estuary.master.admin;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.master.state.MasterNodes;
import io.estuary.master.state.MasterState;
import io.estuary.master.state.WorkerId;
import io.estuary.server.admin.AdminAuth;
import io.estuary.server.admin.AdminHttpServer;
import io.estuary.server.admin.AdminHttpServer.Request;
import io.estuary.server.admin.AdminHttpServer.Response;
import io.estuary.server.admin.AdminViews;
import io.estuary.server.admin.AdminViews.Application;
import io.estuary.server.admin.AdminViews.ApplicationShuffles;
import io.estuary.server.admin.AdminViews.MasterEntry;
import io.estuary.server.admin.AdminViews.Peer;
import io.estuary.server.admin.AdminViews.ShuffleDetail;
import io.estuary.server.admin.AdminViews.ShuffleSummary;
import io.estuary.server.admin.AdminViews.Worker;
import io.estuary.server.tls.JdkServerTls;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The master's admin endpoint, on its own port (served by the shared {@link AdminHttpServer}); docs/rest-api.md
 * documents every route. {@code GET /health} answers 200 while the master serves (liveness and readiness probes). Reads ({@code GET /api/status, /api/masters, /api/workers, /api/applications,
 * /api/shuffles, /api/quotas, /api/tags}) are answered by any master from its replicated state, and say which master answered and its
 * role. Changes ({@code POST /api/workers/(exclude|activate|decommission)}, {@code POST /api/leadership/transfer},
 * {@code POST /api/quotas/(set|remove)}: {@link QuotaAdmin}; {@code POST /api/tags/(worker|default)}: {@link TagAdmin})
 * only the leader makes: a follower answers 421 naming the leader's id and RPC endpoint, and the caller asks the
 * leader. With authentication on, changes (and by configuration reads) need the admin token: 401 without it
 * ({@link AdminAuth}). Bad input gets 400, an unknown worker, master or application 404, a change that cannot be made 409.
 * Every answer is one of {@link AdminViews}.
 *
 * <p>Thread-safe: requests run on the HTTP server's threads and only read the master's state (through its state
 * machine's read()) or submit changes through its log; it holds no state of its own.
 */
public final class MasterAdminEndpoint implements Closeable {
    /** HTTP status for "ask the leader" (Misdirected Request). */
    public static final int NOT_LEADER = 421;

    private final AdminHttpServer http;
    private final AdministeredMaster master;

    /**
     * {@code auth}: which calls need the admin token ({@link AdminAuth#fromConf}); {@code tls}: serve HTTPS with it
     * (the admin port group), or null for plain HTTP.
     */
    public MasterAdminEndpoint(
            String host, int port, AdministeredMaster master, MasterMetrics metrics, AdminAuth auth, JdkServerTls tls)
            throws IOException {
        this.master = master;
        QuotaAdmin quotas = new QuotaAdmin(master, this::servedBy, this::notLeader);
        TagAdmin tags = new TagAdmin(master, this::servedBy, this::notLeader);
        AdminHttpServer.Builder b = AdminHttpServer.builder("master");
        if (tls != null) b.https(tls.sslContext(), tls::sslParameters);
        this.http = b.auth(auth)
                .get("/api/status", r -> Response.json(200, status()))
                // For probes: open without the admin token (estuary.auth.admin.openMetrics), unlike /api/status.
                .get("/health", r -> Response.text(200, "ok\n"))
                .get("/api/masters", r -> Response.json(200, new AdminViews.Masters(servedBy(), masters())))
                .get(
                        "/api/workers",
                        r -> Response.json(200, new AdminViews.Workers(servedBy(), master.state(this::workers))))
                .get(
                        "/api/applications",
                        r -> Response.json(200, new AdminViews.Applications(servedBy(), applications())))
                .get("/api/shuffles", this::shuffles)
                .get("/api/quotas", quotas::list)
                .post("/api/quotas/set", quotas::set)
                .post("/api/quotas/remove", quotas::remove)
                .get("/api/tags", tags::list)
                .post("/api/tags/worker", tags::worker)
                .post("/api/tags/default", tags::defaults)
                .post("/api/leadership/transfer", this::transferLeadership)
                .postPrefix("/api/workers/", this::setWorkerState)
                .metrics(metrics.registry())
                .start(host, port);
    }

    public int port() {
        return http.port();
    }

    private Response transferLeadership(Request r) {
        String to = r.query("to");
        if (to == null || to.isEmpty()) return Response.error(400, "give the new leader's id: ?to=<id>");
        if (master.nodes().isEmpty()) return Response.error(409, "a single master has no one to hand leadership to");
        if (master.nodes().find(to) == null) {
            return Response.error(404, "no master '" + to + "'; the masters are " + ids(master.nodes()));
        }
        if (!master.isLeader()) return notLeader();
        if (to.equals(master.id())) return Response.json(200, new AdminViews.LeadershipTransfer(to, false));
        try {
            master.transferLeadership(to);
            return Response.json(200, new AdminViews.LeadershipTransfer(to, true));
        } catch (IOException | IllegalStateException e) {
            return Response.error(409, "handing leadership to " + to + " failed: " + e.getMessage());
        }
    }

    private Response setWorkerState(Request r) {
        String action = r.path().substring("/api/workers/".length());
        WorkerState state = action.equals("exclude")
                ? WorkerState.WORKER_EXCLUDED
                : action.equals("decommission")
                        ? WorkerState.WORKER_DECOMMISSIONING
                        : action.equals("activate") ? WorkerState.WORKER_ACTIVE : null;
        if (state == null) {
            return Response.error(
                    404,
                    "POST /api/workers/" + action + " is not an admin endpoint; try "
                            + "/api/workers/(exclude|decommission|activate)?id=<host:rpcPort:pushPort:fetchPort>");
        }
        String id = r.query("id");
        if (id == null || id.isEmpty()) {
            return Response.error(400, "give the worker: ?id=<host:rpcPort:pushPort:fetchPort>");
        }
        if (!master.isLeader()) return notLeader();
        if (master.state(s -> s.worker(id)) == null) return Response.error(404, "no registered worker " + id);
        try {
            master.setWorkerState(id, state, "operator (admin API)");
            return Response.json(200, new AdminViews.WorkerStateSet(id, stateName(state)));
        } catch (IllegalArgumentException | IllegalStateException e) {
            return Response.error(409, e.getMessage()); // lost or leadership moved meanwhile
        }
    }

    private Response shuffles(Request r) {
        String app = r.query("app");
        if (app != null && !app.isEmpty() && !master.state(s -> s.hasApplication(app))) {
            return Response.error(404, "no registered application " + app);
        }
        return Response.json(
                200,
                new AdminViews.Shuffles(
                        servedBy(), master.state(s -> shuffles(s, app == null || app.isEmpty() ? null : app))));
    }

    /** 421 naming the leader, for a change asked of a follower. */
    private Response notLeader() {
        String leader = master.log().leaderEndpoint();
        return Response.json(
                NOT_LEADER,
                new AdminViews.NotLeader(
                        "master " + master.id() + " is not the leader; ask "
                                + (leader == null ? "the leader (none elected yet)" : leader),
                        leaderId(),
                        leader));
    }

    /** The leader's id in the HA group: this master's id for a single master, null while none is known. */
    private String leaderId() {
        if (master.nodes().isEmpty() || master.isLeader()) return master.id();
        String leader = master.log().leaderEndpoint();
        for (MasterNodes.Node n : master.nodes().all()) if (n.rpcEndpoint().equals(leader)) return n.id;
        return null;
    }

    private String role() {
        return master.nodes().isEmpty() ? "single" : master.isLeader() ? "leader" : "follower";
    }

    /** Which master answered, so a reader knows whether it read the leader. */
    private AdminViews.ServedBy servedBy() {
        return new AdminViews.ServedBy(master.id(), role(), master.version());
    }

    private List<MasterEntry> masters() {
        List<MasterEntry> out = new ArrayList<>();
        String leaderId = leaderId();
        if (master.nodes().isEmpty()) {
            out.add(new MasterEntry(
                    master.id(),
                    master.endpoint(),
                    null,
                    "single",
                    true,
                    master.version(),
                    master.log().term()));
            return out;
        }
        for (MasterNodes.Node n : master.nodes().all()) {
            boolean self = n.id.equals(master.id());
            // a master knows only its own version and term; the CLI asks each master for its own
            out.add(new MasterEntry(
                    n.id,
                    n.rpcEndpoint(),
                    n.raftEndpoint(),
                    n.id.equals(leaderId) ? "leader" : "follower",
                    self,
                    self ? master.version() : null,
                    self ? master.log().term() : null));
        }
        return out;
    }

    private List<Worker> workers(MasterState st) {
        List<Worker> workers = new ArrayList<>();
        for (WorkerInfo w : st.workers()) {
            String id = WorkerId.of(w.getAddress());
            List<AdminViews.Disk> disks = new ArrayList<>();
            for (DiskInfo d : w.getDisksList()) disks.add(AdminViews.Disk.of(d));
            workers.add(new Worker(
                    id,
                    stateName(st.workerState(id)),
                    st.workerStateReason(id),
                    w.getVersion().isEmpty() ? "unknown" : w.getVersion(),
                    w.getAddress().getHost(),
                    w.getAddress().getRpcPort(),
                    w.getAddress().getPushPort(),
                    w.getAddress().getFetchPort(),
                    disks));
        }
        return workers;
    }

    /** Every application with its shuffles, each with how many workers hold it. */
    /** Every application with its shuffles and who runs it (as this master knows: see {@link #principalOf}). */
    private List<Application> applications() {
        List<Application> apps = master.state(st -> {
            List<Application> out = new ArrayList<>();
            for (String app : st.applicationIds()) {
                List<ShuffleSummary> shuffles = new ArrayList<>();
                for (Map.Entry<Integer, List<PartitionLocation>> e :
                        st.shuffles(app).entrySet()) {
                    ShuffleDetail d = shuffle(e.getKey(), e.getValue());
                    shuffles.add(new ShuffleSummary(
                            d.id(), d.partitions(), d.locations(), d.workers().size()));
                }
                out.add(new Application(app, "", "", false, shuffles));
            }
            return out;
        });
        List<Application> named = new ArrayList<>(apps.size());
        for (Application a : apps) {
            io.estuary.common.protocol.ApplicationPrincipal who = master.principalOf(a.id());
            named.add(
                    who == null
                            ? a
                            : new Application(
                                    a.id(), who.getUser(), who.getTenant(), who.getHighPriority(), a.shuffles()));
        }
        return named;
    }

    /** Applications (all, or only {@code onlyApp}) with their shuffles, each listing its workers. */
    private static List<ApplicationShuffles> shuffles(MasterState st, String onlyApp) {
        List<ApplicationShuffles> apps = new ArrayList<>();
        for (String app : st.applicationIds()) {
            if (onlyApp != null && !onlyApp.equals(app)) continue;
            List<ShuffleDetail> shuffles = new ArrayList<>();
            for (Map.Entry<Integer, List<PartitionLocation>> e :
                    st.shuffles(app).entrySet()) {
                shuffles.add(shuffle(e.getKey(), e.getValue()));
            }
            apps.add(new ApplicationShuffles(app, shuffles));
        }
        return apps;
    }

    private static ShuffleDetail shuffle(int id, List<PartitionLocation> locations) {
        TreeSet<String> ws = new TreeSet<>();
        TreeSet<Integer> partitions = new TreeSet<>();
        for (PartitionLocation l : locations) {
            ws.add(WorkerId.of(l.getWorker()));
            partitions.add(l.getPartitionId());
        }
        return new ShuffleDetail(id, partitions.size(), locations.size(), new ArrayList<>(ws));
    }

    private AdminViews.MasterStatus status() {
        List<Peer> peers = new ArrayList<>();
        for (MasterNodes.Node n : master.nodes().all()) peers.add(new Peer(n.id, n.rpcEndpoint(), n.raftEndpoint()));
        return new AdminViews.MasterStatus(
                role(),
                master.id(),
                master.version(),
                io.estuary.common.ProtocolVersion.CURRENT,
                master.log().leaderEndpoint(),
                leaderId(),
                master.log().term(),
                master.log().appliedIndex(),
                peers,
                master.state(this::workers),
                applications());
    }

    /** ACTIVE, EXCLUDED, ...: the protobuf name without its prefix. */
    static String stateName(WorkerState s) {
        return s.name().replace("WORKER_", "");
    }

    private static List<String> ids(MasterNodes nodes) {
        List<String> out = new ArrayList<>();
        for (MasterNodes.Node n : nodes.all()) out.add(n.id);
        return out;
    }

    @Override
    public void close() {
        http.close();
    }
}
