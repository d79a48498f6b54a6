package io.estuary.master.admin;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.master.Master;
import io.estuary.master.state.MasterNodes;
import io.estuary.master.state.MasterState;
import io.estuary.master.state.WorkerId;
import io.estuary.server.admin.AdminHttpServer;
import io.estuary.server.admin.AdminHttpServer.Request;
import io.estuary.server.admin.AdminHttpServer.Response;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static io.estuary.server.admin.Json.map;

/**
 * The master's admin endpoint, on its own port (served by the shared {@link AdminHttpServer}); docs/rest-api.md
 * documents every route. Reads ({@code GET /api/status, /api/masters, /api/workers, /api/applications,
 * /api/shuffles}) are answered by any master from its replicated state, and say which master answered and its
 * role. Changes ({@code POST /api/workers/(exclude|activate|decommission)}, {@code POST /api/leadership/transfer})
 * only the leader makes: a follower answers 421 naming the leader's id and RPC endpoint, and the caller asks the
 * leader. Bad input gets 400, an unknown worker, master or application 404, a change that cannot be made 409.
 *
 * <p>Thread-safe: requests run on the HTTP server's threads and only read the master's state (through its state
 * machine's read()) or submit changes through its log; it holds no state of its own.
 */
public final class MasterAdminEndpoint implements Closeable {
  /** HTTP status for "ask the leader" (Misdirected Request). */
  public static final int NOT_LEADER = 421;

  private final AdminHttpServer http;
  private final Master master;

  public MasterAdminEndpoint(String host, int port, Master master, MasterMetrics metrics) throws IOException {
    this.master = master;
    this.http = AdminHttpServer.builder("master")
        .get("/api/status", r -> Response.json(200, status()))
        .get("/api/masters", r -> Response.json(200, withSource(map("masters", masters()))))
        .get("/api/workers", r -> Response.json(200, withSource(map("workers", master.state(this::workers)))))
        .get("/api/applications", r -> Response.json(200, withSource(map("applications",
            master.state(s -> applications(s, null, false))))))
        .get("/api/shuffles", this::shuffles)
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
    if (to.equals(master.id())) return Response.json(200, map("leader", to, "changed", false));
    try {
      master.transferLeadership(to);
      return Response.json(200, map("leader", to, "changed", true));
    } catch (IOException | IllegalStateException e) {
      return Response.error(409, "handing leadership to " + to + " failed: " + e.getMessage());
    }
  }

  private Response setWorkerState(Request r) {
    String action = r.path().substring("/api/workers/".length());
    WorkerState state = action.equals("exclude") ? WorkerState.WORKER_EXCLUDED
        : action.equals("decommission") ? WorkerState.WORKER_DECOMMISSIONING
        : action.equals("activate") ? WorkerState.WORKER_ACTIVE : null;
    if (state == null) {
      return Response.error(404, "POST /api/workers/" + action + " is not an admin endpoint; try "
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
      return Response.json(200, map("worker", id, "state", stateName(state)));
    } catch (IllegalArgumentException | IllegalStateException e) {
      return Response.error(409, e.getMessage()); // lost or leadership moved meanwhile
    }
  }

  private Response shuffles(Request r) {
    String app = r.query("app");
    if (app != null && !app.isEmpty() && !master.state(s -> s.hasApplication(app))) {
      return Response.error(404, "no registered application " + app);
    }
    return Response.json(200, withSource(map("applications",
        master.state(s -> applications(s, app == null || app.isEmpty() ? null : app, true)))));
  }

  /** 421 naming the leader, for a change asked of a follower. */
  private Response notLeader() {
    String leader = master.log().leaderEndpoint();
    return Response.json(NOT_LEADER, map("error", "master " + master.id() + " is not the leader; ask "
        + (leader == null ? "the leader (none elected yet)" : leader), "leaderId", leaderId(), "leader", leader));
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

  /** Adds which master answered, so a reader knows whether it read the leader. */
  private Map<String, Object> withSource(Map<String, Object> m) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("servedBy", map("id", master.id(), "role", role(), "version", master.version()));
    out.putAll(m);
    return out;
  }

  private List<Object> masters() {
    List<Object> out = new ArrayList<>();
    String leaderId = leaderId();
    if (master.nodes().isEmpty()) {
      out.add(map("id", master.id(), "rpc", master.endpoint(), "role", "single", "self", true, "version",
          master.version(), "term", master.log().term()));
      return out;
    }
    for (MasterNodes.Node n : master.nodes().all()) {
      boolean self = n.id.equals(master.id());
      Map<String, Object> m = map("id", n.id, "rpc", n.rpcEndpoint(), "raft", n.raftEndpoint(),
          "role", n.id.equals(leaderId) ? "leader" : "follower", "self", self);
      if (self) { // a master knows only its own version and term; the CLI asks each master for its own
        m.put("version", master.version());
        m.put("term", master.log().term());
      }
      out.add(m);
    }
    return out;
  }

  private List<Object> workers(MasterState st) {
    List<Object> workers = new ArrayList<>();
    for (WorkerInfo w : st.workers()) {
      String id = WorkerId.of(w.getAddress());
      List<Object> disks = new ArrayList<>();
      for (DiskInfo d : w.getDisksList()) {
        disks.add(map("mountPoint", d.getMountPoint(), "status", d.getStatus().name(), "usableBytes",
            d.getUsableBytes(), "activeSlots", d.getActiveSlots(), "flushMicros", d.getAvgFlushMicros(),
            "fetchMicros", d.getAvgFetchMicros()));
      }
      workers.add(map("id", id, "state", stateName(st.workerState(id)), "reason", st.workerStateReason(id),
          "version", w.getVersion().isEmpty() ? "unknown" : w.getVersion(), "host", w.getAddress().getHost(),
          "rpcPort", w.getAddress().getRpcPort(), "pushPort", w.getAddress().getPushPort(),
          "fetchPort", w.getAddress().getFetchPort(), "disks", disks));
    }
    return workers;
  }

  /** Applications (all, or only {@code onlyApp}) with their shuffles; with {@code detail}, each shuffle's workers. */
  private static List<Object> applications(MasterState st, String onlyApp, boolean detail) {
    List<Object> apps = new ArrayList<>();
    for (String app : st.applicationIds()) {
      if (onlyApp != null && !onlyApp.equals(app)) continue;
      List<Object> shuffles = new ArrayList<>();
      for (Map.Entry<Integer, List<PartitionLocation>> e : st.shuffles(app).entrySet()) {
        TreeSet<String> ws = new TreeSet<>();
        TreeSet<Integer> partitions = new TreeSet<>();
        for (PartitionLocation l : e.getValue()) {
          ws.add(WorkerId.of(l.getWorker()));
          partitions.add(l.getPartitionId());
        }
        Map<String, Object> s = map("id", e.getKey(), "partitions", partitions.size(), "locations",
            e.getValue().size());
        s.put("workers", detail ? new ArrayList<>(ws) : (Object) ws.size());
        shuffles.add(s);
      }
      apps.add(map("id", app, "shuffles", shuffles));
    }
    return apps;
  }

  private Map<String, Object> status() {
    Map<String, Object> s = new LinkedHashMap<>();
    MasterNodes nodes = master.nodes();
    s.put("role", role());
    s.put("id", master.id());
    s.put("version", master.version());
    s.put("protocolVersion", io.estuary.common.ProtocolVersion.CURRENT);
    s.put("leader", master.log().leaderEndpoint());
    s.put("leaderId", leaderId());
    s.put("term", master.log().term());
    s.put("appliedIndex", master.log().appliedIndex());
    List<Object> peers = new ArrayList<>();
    for (MasterNodes.Node n : nodes.all()) {
      peers.add(map("id", n.id, "rpc", n.rpcEndpoint(), "raft", n.raftEndpoint()));
    }
    s.put("peers", peers);
    s.put("workers", master.state(this::workers));
    s.put("applications", master.state(st -> applications(st, null, false)));
    return s;
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
