package io.estuary.master.admin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.util.NamedThreadFactory;
import io.estuary.master.Master;
import io.estuary.master.state.MasterNodes;
import io.estuary.master.state.WorkerId;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;

/**
 * The master's admin endpoint, on its own port:
 * <ul>
 *   <li>{@code GET /api/status}: role, leader, term, applied index, peers, workers with their disks, applications
 *       and their shuffles (JSON);</li>
 *   <li>{@code POST /api/leadership/transfer?to=<id>}: hand leadership to another master;</li>
 *   <li>{@code GET /metrics}: Prometheus metrics.</li>
 * </ul>
 */
public final class AdminHttpServer implements Closeable {
  private final HttpServer http;
  private final ExecutorService threads = Executors.newFixedThreadPool(2, new NamedThreadFactory("master-http"));
  private final Master master;
  private final MasterMetrics metrics;

  public AdminHttpServer(String host, int port, Master master, MasterMetrics metrics) throws IOException {
    this.master = master;
    this.metrics = metrics;
    this.http = HttpServer.create(new InetSocketAddress(host, port), 64);
    http.setExecutor(threads);
    http.createContext("/", ex -> {
      try {
        route(ex);
      } catch (RuntimeException e) {
        send(ex, 500, "application/json", Json.write(map("error", String.valueOf(e.getMessage()))));
      } finally {
        ex.close();
      }
    });
    http.start();
  }

  public int port() {
    return http.getAddress().getPort();
  }

  private void route(HttpExchange ex) throws IOException {
    String path = ex.getRequestURI().getPath();
    String method = ex.getRequestMethod();
    if (path.equals("/metrics") && method.equals("GET")) {
      send(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.scrape());
    } else if (path.equals("/api/status") && method.equals("GET")) {
      send(ex, 200, "application/json", Json.write(status()));
    } else if (path.equals("/api/leadership/transfer") && method.equals("POST")) {
      String to = query(ex, "to");
      if (to == null) {
        send(ex, 400, "application/json", Json.write(map("error", "give the new leader's id: ?to=<id>")));
        return;
      }
      try {
        master.transferLeadership(to);
        send(ex, 200, "application/json", Json.write(map("leader", to)));
      } catch (IOException | IllegalStateException e) {
        send(ex, 409, "application/json", Json.write(map("error", e.getMessage())));
      }
    } else if (path.startsWith("/api/workers/") && method.equals("POST")) {
      String action = path.substring("/api/workers/".length());
      WorkerState state = action.equals("exclude") ? WorkerState.WORKER_EXCLUDED
          : action.equals("decommission") ? WorkerState.WORKER_DECOMMISSIONING
          : action.equals("activate") ? WorkerState.WORKER_ACTIVE : null;
      String id = query(ex, "id");
      if (state == null || id == null) {
        send(ex, 400, "application/json", Json.write(map("error", "POST /api/workers/(exclude|decommission|activate)"
            + "?id=<host:rpcPort:pushPort:fetchPort>")));
        return;
      }
      try {
        master.setWorkerState(id, state, "admin API");
        send(ex, 200, "application/json", Json.write(map("worker", id, "state", state.name())));
      } catch (IllegalArgumentException | IllegalStateException e) {
        send(ex, 409, "application/json", Json.write(map("error", e.getMessage())));
      }
    } else {
      send(ex, 404, "application/json", Json.write(map("error", method + " " + path + " is not an admin endpoint; "
          + "try GET /api/status, POST /api/leadership/transfer?to=<id>, GET /metrics")));
    }
  }

  private static String query(HttpExchange ex, String name) {
    String q = ex.getRequestURI().getQuery();
    if (q == null) return null;
    for (String kv : q.split("&")) {
      int i = kv.indexOf('=');
      if (i > 0 && kv.substring(0, i).equals(name)) return kv.substring(i + 1);
    }
    return null;
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

  static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put(String.valueOf(kv[i]), kv[i + 1]);
    return m;
  }

  private static void send(HttpExchange ex, int code, String type, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(code, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  @Override
  public void close() {
    http.stop(0);
    threads.shutdownNow();
  }
}
