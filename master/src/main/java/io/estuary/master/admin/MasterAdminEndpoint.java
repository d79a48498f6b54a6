package io.estuary.master.admin;

import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.master.Master;
import io.estuary.master.state.MasterNodes;
import io.estuary.master.state.WorkerId;
import io.estuary.network.admin.AdminHttpServer;
import io.estuary.network.admin.AdminHttpServer.Request;
import io.estuary.network.admin.AdminHttpServer.Response;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.estuary.network.admin.Json.map;

/**
 * The master's admin endpoint, on its own port (served by the shared {@link AdminHttpServer}):
 * <ul>
 *   <li>{@code GET /api/status}: role, leader, term, applied index, peers, workers with their disks, applications
 *       and their shuffles (JSON);</li>
 *   <li>{@code POST /api/leadership/transfer?to=<id>}: hand leadership to another master;</li>
 *   <li>{@code POST /api/workers/(exclude|decommission|activate)?id=<worker>}: change a worker's state;</li>
 *   <li>{@code GET /metrics}: Prometheus metrics.</li>
 * </ul>
 * Thread-safe: requests run on the HTTP server's threads and only read the master's state (through its state
 * machine's read()) or submit changes through its log; it holds no state of its own.
 */
public final class MasterAdminEndpoint implements Closeable {
  private final AdminHttpServer http;
  private final Master master;

  public MasterAdminEndpoint(String host, int port, Master master, MasterMetrics metrics) throws IOException {
    this.master = master;
    this.http = AdminHttpServer.builder("master")
        .get("/api/status", r -> Response.json(200, status()))
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
    if (to == null) return Response.error(400, "give the new leader's id: ?to=<id>");
    try {
      master.transferLeadership(to);
      return Response.json(200, map("leader", to));
    } catch (IOException | IllegalStateException e) {
      return Response.error(409, e.getMessage());
    }
  }

  private Response setWorkerState(Request r) {
    String action = r.path().substring("/api/workers/".length());
    WorkerState state = action.equals("exclude") ? WorkerState.WORKER_EXCLUDED
        : action.equals("decommission") ? WorkerState.WORKER_DECOMMISSIONING
        : action.equals("activate") ? WorkerState.WORKER_ACTIVE : null;
    String id = r.query("id");
    if (state == null || id == null) {
      return Response.error(400, "POST /api/workers/(exclude|decommission|activate)?id=<host:rpcPort:pushPort:fetchPort>");
    }
    try {
      master.setWorkerState(id, state, "admin API");
      return Response.json(200, map("worker", id, "state", state.name()));
    } catch (IllegalArgumentException | IllegalStateException e) {
      return Response.error(409, e.getMessage());
    }
  }

  private Map<String, Object> status() {
    Map<String, Object> s = new LinkedHashMap<>();
    MasterNodes nodes = master.nodes();
    s.put("role", nodes.isEmpty() ? "single" : master.isLeader() ? "leader" : "follower");
    s.put("id", master.id());
    s.put("leader", master.log().leaderEndpoint());
    s.put("term", master.log().term());
    s.put("appliedIndex", master.log().appliedIndex());
    List<Object> peers = new ArrayList<>();
    for (MasterNodes.Node n : nodes.all()) {
      peers.add(map("id", n.id, "rpc", n.rpcEndpoint(), "raft", n.raftEndpoint()));
    }
    s.put("peers", peers);
    s.putAll(master.state(st -> {
      Map<String, Object> m = new LinkedHashMap<>();
      List<Object> workers = new ArrayList<>();
      for (WorkerInfo w : st.workers()) {
        List<Object> disks = new ArrayList<>();
        for (DiskInfo d : w.getDisksList()) {
          disks.add(map("mountPoint", d.getMountPoint(), "status", d.getStatus().name(), "usableBytes",
              d.getUsableBytes(), "activeSlots", d.getActiveSlots(), "flushMicros", d.getAvgFlushMicros(),
              "fetchMicros", d.getAvgFetchMicros()));
        }
        workers.add(map("id", WorkerId.of(w.getAddress()), "state", st.workerState(WorkerId.of(w.getAddress())).name(),
            "host", w.getAddress().getHost(), "rpcPort",
            w.getAddress().getRpcPort(), "pushPort", w.getAddress().getPushPort(), "fetchPort",
            w.getAddress().getFetchPort(), "disks", disks));
      }
      m.put("workers", workers);
      List<Object> apps = new ArrayList<>();
      for (String app : st.applicationIds()) {
        List<Object> shuffles = new ArrayList<>();
        for (Map.Entry<Integer, List<PartitionLocation>> e : st.shuffles(app).entrySet()) {
          Set<String> ws = new HashSet<>();
          for (PartitionLocation l : e.getValue()) ws.add(WorkerId.of(l.getWorker()));
          shuffles.add(map("id", e.getKey(), "partitions", e.getValue().size(), "workers", ws.size()));
        }
        apps.add(map("id", app, "shuffles", shuffles));
      }
      m.put("applications", apps);
      return m;
    }));
    return s;
  }

  @Override
  public void close() {
    http.close();
  }
}
