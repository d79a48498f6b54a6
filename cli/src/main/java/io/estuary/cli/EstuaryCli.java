package io.estuary.cli;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.server.admin.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.estuary.cli.MasterHttp.cast;

/**
 * {@code bin/estuary}: the operator's command line over the masters' admin API (docs/rest-api.md). Asks any master
 * and follows the leader for changes; prints tables, or the API's JSON with {@code --json}; exits 0 on success,
 * 1 when a master refuses or something named does not exist, 2 on a bad command line, 3 when no master answers or
 * leads. Warns when nodes run different versions (a rolling upgrade under way). Stateless between runs.
 */
public final class EstuaryCli {
  static final String USAGE = String.join("\n",
      "usage: estuary [--master host:httpPort[,host:httpPort...]] [--json] <command> [args]",
      "commands:",
      "  status                         cluster overview: leader, term, masters, workers, versions",
      "  masters                        masters with role, term and version",
      "  workers                        workers with state, version and disks",
      "  apps                           applications and how many shuffles each has",
      "  shuffles [app]                 shuffles with partitions and workers (of one application)",
      "  exclude <worker>               give a worker no new slots",
      "  activate <worker>              give it slots again",
      "  decommission <worker>          drain a worker: no new slots, it exits once its shuffles are gone",
      "  transfer-leadership <masterId> hand leadership to another master",
      "A worker is host:rpcPort:pushPort:fetchPort, or host:rpcPort when that is unambiguous.",
      "Without --master: $ESTUARY_MASTERS, else the masters' hosts in $ESTUARY_CONF_DIR/estuary-defaults.conf",
      "with estuary.master.http.port.");

  private final PrintStream out;
  private final PrintStream err;
  private boolean json;
  private MasterHttp masters;

  private EstuaryCli(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs one command; returns the exit code. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    EstuaryCli cli = new EstuaryCli(out, err);
    try {
      cli.execute(args);
      return 0;
    } catch (CliException e) {
      err.println("estuary: " + e.getMessage());
      if (e.exitCode() == CliException.USAGE) err.println(USAGE);
      return e.exitCode();
    }
  }

  private void execute(String[] args) throws CliException {
    List<String> words = new ArrayList<>();
    String masterList = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--json")) {
        json = true;
      } else if (a.equals("--master") || a.equals("--masters")) {
        if (i + 1 == args.length) throw usage("--master needs host:port[,host:port...]");
        masterList = args[++i];
      } else if (a.startsWith("--master=")) {
        masterList = a.substring("--master=".length());
      } else if (a.equals("-h") || a.equals("--help") || a.equals("help")) {
        out.println(USAGE);
        return;
      } else if (a.startsWith("-")) {
        throw usage("unknown option " + a);
      } else {
        words.add(a);
      }
    }
    if (words.isEmpty()) throw usage("give a command");
    masters = new MasterHttp(masterList != null ? split(masterList) : defaultMasters());
    String cmd = words.get(0);
    List<String> rest = words.subList(1, words.size());
    switch (cmd) {
      case "status": args(cmd, rest, 0, 0); status(); break;
      case "masters": args(cmd, rest, 0, 0); masters(); break;
      case "workers": args(cmd, rest, 0, 0); workers(); break;
      case "apps": case "applications": args(cmd, rest, 0, 0); apps(); break;
      case "shuffles": args(cmd, rest, 0, 1); shuffles(rest.isEmpty() ? null : rest.get(0)); break;
      case "exclude": case "activate": case "decommission": args(cmd, rest, 1, 1); setState(cmd, rest.get(0)); break;
      case "transfer-leadership": args(cmd, rest, 1, 1); transfer(rest.get(0)); break;
      default: throw usage("unknown command '" + cmd + "'");
    }
  }

  // ---- commands ----

  private void status() throws CliException {
    List<Map<String, Object>> ms = masterRows();
    Map<String, Object> ws = cast(masters.read("/api/workers"));
    Map<String, Object> as = cast(masters.read("/api/applications"));
    List<Object> workers = list(ws.get("workers"));
    Map<String, Integer> byState = new TreeMap<>();
    for (Object w : workers) byState.merge(String.valueOf(cast(w).get("state")), 1, Integer::sum);
    Map<String, Object> leader = null;
    for (Map<String, Object> m : ms) if ("leader".equals(m.get("role")) || "single".equals(m.get("role"))) leader = m;
    Map<String, List<String>> versions = versions(ms, workers);
    if (json) {
      out.println(Json.write(Json.map("leader", leader == null ? null : leader.get("id"),
          "term", leader == null ? null : leader.get("term"), "masters", ms, "workersByState", byState,
          "workers", workers.size(), "applications", list(as.get("applications")).size(),
          "versions", versions, "mixedVersions", versions.size() > 1)));
      warnMixed(versions, err);
      return;
    }
    out.println("leader:       " + (leader == null ? "none" : display(leader.get("id")) + " (term " + leader.get("term")
        + ")"));
    long reachable = ms.stream().filter(m -> !"unreachable".equals(m.get("role"))).count();
    out.println("masters:      " + ms.size() + " (" + reachable + " answering)");
    out.println("workers:      " + workers.size() + (byState.isEmpty() ? "" : " " + byState));
    out.println("applications: " + list(as.get("applications")).size());
    out.println("versions:     " + String.join(", ", versions.keySet()));
    warnMixed(versions, out);
  }

  private void masters() throws CliException {
    List<Map<String, Object>> ms = masterRows();
    Map<String, List<String>> versions = versions(ms, List.of());
    if (json) {
      out.println(Json.write(Json.map("masters", ms)));
      warnMixed(versions, err);
      return;
    }
    Table t = new Table("ID", "ROLE", "TERM", "VERSION", "HTTP", "RPC");
    for (Map<String, Object> m : ms) {
      t.row(display(m.get("id")), m.get("role"), m.get("term"), m.get("version"), m.get("http"), m.get("rpc"));
    }
    t.print(out);
    warnMixed(versions, out);
  }

  private void workers() throws CliException {
    Map<String, Object> ws = cast(masters.read("/api/workers"));
    List<Object> workers = list(ws.get("workers"));
    Map<String, List<String>> versions = versions(List.of(), workers);
    if (json) {
      out.println(Json.write(ws));
      warnMixed(versions, err);
      return;
    }
    Table t = new Table("WORKER", "STATE", "VERSION", "DISK", "DISK STATUS", "USABLE", "SLOTS");
    for (Object o : workers) {
      Map<String, Object> w = cast(o);
      List<Object> disks = list(w.get("disks"));
      if (disks.isEmpty()) t.row(w.get("id"), w.get("state"), w.get("version"), "-");
      boolean first = true;
      for (Object d : disks) {
        Map<String, Object> disk = cast(d);
        t.row(first ? w.get("id") : "", first ? w.get("state") : "", first ? w.get("version") : "",
            disk.get("mountPoint"), String.valueOf(disk.get("status")).replace("DISK_", ""),
            bytes(((Number) disk.get("usableBytes")).longValue()), disk.get("activeSlots"));
        first = false;
      }
    }
    t.print(out);
    if (workers.isEmpty()) out.println("(no registered workers)");
    warnMixed(versions, out);
  }

  private void apps() throws CliException {
    Map<String, Object> as = cast(masters.read("/api/applications"));
    if (json) {
      out.println(Json.write(as));
      return;
    }
    Table t = new Table("APPLICATION", "SHUFFLES");
    for (Object o : list(as.get("applications"))) t.row(cast(o).get("id"), list(cast(o).get("shuffles")).size());
    t.print(out);
  }

  private void shuffles(String app) throws CliException {
    Map<String, Object> as = cast(masters.read("/api/shuffles" + (app == null ? "" : "?app=" + MasterHttp.encode(app))));
    if (json) {
      out.println(Json.write(as));
      return;
    }
    Table t = new Table("APPLICATION", "SHUFFLE", "PARTITIONS", "LOCATIONS", "WORKERS");
    for (Object o : list(as.get("applications"))) {
      Map<String, Object> a = cast(o);
      for (Object s : list(a.get("shuffles"))) {
        Map<String, Object> sh = cast(s);
        List<String> ws = new ArrayList<>();
        for (Object w : list(sh.get("workers"))) ws.add(String.valueOf(w));
        t.row(a.get("id"), sh.get("id"), sh.get("partitions"), sh.get("locations"), String.join(",", ws));
      }
    }
    t.print(out);
  }

  private void setState(String action, String worker) throws CliException {
    String id = resolveWorker(worker);
    Map<String, Object> r = cast(masters.write("/api/workers/" + action + "?id=" + MasterHttp.encode(id)));
    if (json) out.println(Json.write(r));
    else out.println("worker " + id + " is now " + r.get("state"));
  }

  private void transfer(String to) throws CliException {
    Map<String, Object> r = cast(masters.write("/api/leadership/transfer?to=" + MasterHttp.encode(to)));
    // Wait (bounded) until the masters say so, so that the next command finds the new leader.
    long deadline = System.currentTimeMillis() + 15_000;
    while (System.currentTimeMillis() < deadline) {
      Map<String, Map<String, Object>> st = masters.freshStatuses();
      String leader = MasterHttp.leader(st);
      Map<String, Object> s = leader == null ? null : st.get(leader);
      if (s != null && to.equals(s.get("id"))) break;
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    if (json) out.println(Json.write(r));
    else out.println(Boolean.FALSE.equals(r.get("changed")) ? to + " already leads" : to + " leads now");
  }

  // ---- helpers ----

  /** The worker's full id from a full id or an unambiguous prefix (host:rpcPort). */
  private String resolveWorker(String given) throws CliException {
    List<String> ids = new ArrayList<>();
    for (Object w : list(cast(masters.read("/api/workers")).get("workers"))) ids.add(String.valueOf(cast(w).get("id")));
    if (ids.contains(given)) return given;
    List<String> matches = new ArrayList<>();
    for (String id : ids) if (id.startsWith(given + ":")) matches.add(id);
    if (matches.size() == 1) return matches.get(0);
    if (matches.isEmpty()) {
      throw new CliException(CliException.FAILED, "unknown worker '" + given + "'; registered workers: "
          + (ids.isEmpty() ? "none" : String.join(", ", ids)));
    }
    throw new CliException(CliException.FAILED, "'" + given + "' names several workers: " + String.join(", ", matches));
  }

  /**
   * One row per master: every master of the group (from any master's /api/masters) joined with what each master
   * given on the command line says of itself; masters that do not answer show as unreachable.
   */
  private List<Map<String, Object>> masterRows() throws CliException {
    Map<String, Map<String, Object>> statuses = masters.statuses();
    if (statuses.values().stream().allMatch(s -> s == null)) {
      throw new CliException(CliException.UNREACHABLE, "no master answered at "
          + String.join(", ", masters.endpoints()) + " (give the masters' HTTP addresses with --master)");
    }
    Map<String, Map<String, Object>> rows = new LinkedHashMap<>();
    for (Object o : list(cast(masters.read("/api/masters")).get("masters"))) {
      Map<String, Object> m = cast(o);
      rows.put(String.valueOf(m.get("id")), Json.map("id", m.get("id"), "role", "unreachable", "term", null,
          "version", null, "http", null, "rpc", m.get("rpc")));
    }
    List<String> silent = new ArrayList<>();
    for (Map.Entry<String, Map<String, Object>> e : statuses.entrySet()) {
      Map<String, Object> s = e.getValue();
      if (s == null) {
        silent.add(e.getKey());
        continue;
      }
      Map<String, Object> row = rows.computeIfAbsent(String.valueOf(s.get("id")), k -> Json.map("id", s.get("id"),
          "rpc", null));
      row.put("role", s.get("role"));
      row.put("term", s.get("term"));
      row.put("version", s.get("version"));
      row.put("http", e.getKey());
    }
    // A master that does not answer has no id we could learn: pin its address on the one group member left
    // unmatched on that host, or list it on its own.
    for (String endpoint : silent) {
      String host = endpoint.substring(0, endpoint.lastIndexOf(':'));
      List<Map<String, Object>> candidates = new ArrayList<>();
      for (Map<String, Object> r : rows.values()) {
        if (r.get("http") == null && r.get("rpc") != null && String.valueOf(r.get("rpc")).startsWith(host + ":")) {
          candidates.add(r);
        }
      }
      if (candidates.size() == 1) candidates.get(0).put("http", endpoint);
      else rows.put("?" + endpoint, Json.map("id", null, "role", "unreachable", "term", null, "version", null,
          "http", endpoint, "rpc", null));
    }
    return new ArrayList<>(rows.values());
  }

  /** Which nodes run which version: version -> node names (master ids, worker ids). */
  private static Map<String, List<String>> versions(List<Map<String, Object>> masterRows, List<Object> workers) {
    Map<String, List<String>> out = new TreeMap<>();
    for (Map<String, Object> m : masterRows) {
      if (m.get("version") != null) out.computeIfAbsent(String.valueOf(m.get("version")), v -> new ArrayList<>())
          .add("master " + display(m.get("id")));
    }
    for (Object o : workers) {
      Map<String, Object> w = cast(o);
      out.computeIfAbsent(String.valueOf(w.get("version")), v -> new ArrayList<>()).add("worker " + w.get("id"));
    }
    return out;
  }

  private static void warnMixed(Map<String, List<String>> versions, PrintStream to) {
    if (versions.size() <= 1) return;
    List<String> parts = new ArrayList<>();
    for (Map.Entry<String, List<String>> e : versions.entrySet()) {
      List<String> nodes = e.getValue();
      String named = String.join(", ", nodes.subList(0, Math.min(nodes.size(), 4)))
          + (nodes.size() > 4 ? " and " + (nodes.size() - 4) + " more" : ""); // thousands of workers: a sample
      parts.add(e.getKey() + " on " + nodes.size() + " node" + (nodes.size() == 1 ? "" : "s") + " (" + named + ")");
    }
    to.println("WARNING: nodes run different versions: " + String.join("; ", parts));
  }

  private static String display(Object masterId) {
    return masterId == null ? "?" : masterId.toString().isEmpty() ? "master" : masterId.toString();
  }

  private static String bytes(long b) {
    if (b < 1024) return b + " B";
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = b;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(java.util.Locale.ROOT, "%.1f %s", v, units[u]);
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o) {
    return o instanceof List ? (List<Object>) o : List.of();
  }

  private static void args(String cmd, List<String> rest, int min, int max) throws CliException {
    if (rest.size() < min || rest.size() > max) {
      throw usage(cmd + " takes " + (min == max ? String.valueOf(min) : min + " to " + max) + " argument"
          + (max == 1 ? "" : "s") + ", got " + rest.size());
    }
  }

  private static CliException usage(String why) {
    return new CliException(CliException.USAGE, why);
  }

  private static List<String> split(String list) throws CliException {
    List<String> out = new ArrayList<>();
    for (String s : list.split(",")) if (!s.trim().isEmpty()) out.add(s.trim());
    if (out.isEmpty()) throw usage("--master names no master");
    for (String s : out) if (s.lastIndexOf(':') <= 0) throw usage("master '" + s + "' is not host:httpPort");
    return out;
  }

  /** $ESTUARY_MASTERS, else the masters' hosts in estuary-defaults.conf with their HTTP port, else localhost. */
  private static List<String> defaultMasters() throws CliException {
    String env = System.getenv("ESTUARY_MASTERS");
    if (env != null && !env.trim().isEmpty()) return split(env);
    String dir = System.getenv("ESTUARY_CONF_DIR") == null ? "conf" : System.getenv("ESTUARY_CONF_DIR");
    Path file = Paths.get(dir, "estuary-defaults.conf");
    EstuaryConf conf = new EstuaryConf();
    if (Files.exists(file)) {
      try {
        conf = EstuaryConf.load(file);
      } catch (IOException | RuntimeException e) {
        throw new CliException(CliException.USAGE, "cannot read " + file + ": " + e.getMessage());
      }
    }
    int http = conf.get(MasterConfig.HTTP_PORT);
    List<String> hosts = new ArrayList<>();
    for (String node : conf.get(MasterConfig.HA_NODES)) {
      hosts.add(node.substring(node.indexOf('=') + 1).split(":")[0]);
    }
    if (hosts.isEmpty()) {
      for (String e : conf.get(MasterConfig.ENDPOINTS)) hosts.add(e.substring(0, e.lastIndexOf(':')));
    }
    List<String> out = new ArrayList<>();
    for (String h : hosts) if (!out.contains(h + ":" + http)) out.add(h + ":" + http);
    return out;
  }
}
