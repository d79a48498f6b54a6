package io.estuary.cli;

import io.estuary.cli.CliViews.MasterRow;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import io.estuary.server.admin.AdminViews.MasterStatus;
import io.estuary.server.admin.AdminViews.Worker;
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

/**
 * {@code bin/estuary}: the operator's command line over the masters' admin API (docs/rest-api.md). Asks any master
 * and follows the leader for changes; prints tables, or with {@code --json} the API's JSON ({@link AdminViews}, or
 * {@link CliViews} for what it joins from several masters); exits 0 on success,
 * 1 when a master refuses or something named does not exist, 2 on a bad command line, 3 when no master answers or
 * leads. Warns when nodes run different versions (a rolling upgrade under way). Stateless between runs.
 */
public final class EstuaryCli {
    static final String USAGE = String.join(
            "\n",
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
            case "status":
                args(cmd, rest, 0, 0);
                status();
                break;
            case "masters":
                args(cmd, rest, 0, 0);
                masters();
                break;
            case "workers":
                args(cmd, rest, 0, 0);
                workers();
                break;
            case "apps":
            case "applications":
                args(cmd, rest, 0, 0);
                apps();
                break;
            case "shuffles":
                args(cmd, rest, 0, 1);
                shuffles(rest.isEmpty() ? null : rest.get(0));
                break;
            case "exclude":
            case "activate":
            case "decommission":
                args(cmd, rest, 1, 1);
                setState(cmd, rest.get(0));
                break;
            case "transfer-leadership":
                args(cmd, rest, 1, 1);
                transfer(rest.get(0));
                break;
            default:
                throw usage("unknown command '" + cmd + "'");
        }
    }

    // ---- commands ----

    private void status() throws CliException {
        List<MasterRow> ms = masterRows();
        List<Worker> workers =
                masters.read("/api/workers", AdminViews.Workers.class).workers();
        int apps = masters.read("/api/applications", AdminViews.Applications.class)
                .applications()
                .size();
        Map<String, Integer> byState = new TreeMap<>();
        for (Worker w : workers) byState.merge(String.valueOf(w.state()), 1, Integer::sum);
        MasterRow leader = null;
        for (MasterRow m : ms) if ("leader".equals(m.role()) || "single".equals(m.role())) leader = m;
        Map<String, List<String>> versions = versions(ms, workers);
        if (json) {
            out.println(AdminJson.write(new CliViews.ClusterStatus(
                    leader == null ? null : leader.id(),
                    leader == null ? null : leader.term(),
                    ms,
                    byState,
                    workers.size(),
                    apps,
                    versions,
                    versions.size() > 1)));
            warnMixed(versions, err);
            return;
        }
        out.println(
                "leader:       " + (leader == null ? "none" : display(leader.id()) + " (term " + leader.term() + ")"));
        long reachable =
                ms.stream().filter(m -> !"unreachable".equals(m.role())).count();
        out.println("masters:      " + ms.size() + " (" + reachable + " answering)");
        out.println("workers:      " + workers.size() + (byState.isEmpty() ? "" : " " + byState));
        out.println("applications: " + apps);
        out.println("versions:     " + String.join(", ", versions.keySet()));
        warnMixed(versions, out);
    }

    private void masters() throws CliException {
        List<MasterRow> ms = masterRows();
        Map<String, List<String>> versions = versions(ms, List.of());
        if (json) {
            out.println(AdminJson.write(new CliViews.MasterRows(ms)));
            warnMixed(versions, err);
            return;
        }
        Table t = new Table("ID", "ROLE", "TERM", "VERSION", "HTTP", "RPC");
        for (MasterRow m : ms) t.row(display(m.id()), m.role(), m.term(), m.version(), m.http(), m.rpc());
        t.print(out);
        warnMixed(versions, out);
    }

    private void workers() throws CliException {
        AdminViews.Workers ws = masters.read("/api/workers", AdminViews.Workers.class);
        List<Worker> workers = ws.workers();
        Map<String, List<String>> versions = versions(List.of(), workers);
        if (json) {
            out.println(AdminJson.write(ws));
            warnMixed(versions, err);
            return;
        }
        Table t = new Table("WORKER", "STATE", "VERSION", "DISK", "DISK STATUS", "USABLE", "SLOTS");
        for (Worker w : workers) {
            if (w.disks().isEmpty()) t.row(w.id(), w.state(), w.version(), "-");
            boolean first = true;
            for (AdminViews.Disk disk : w.disks()) {
                t.row(
                        first ? w.id() : "",
                        first ? w.state() : "",
                        first ? w.version() : "",
                        disk.mountPoint(),
                        String.valueOf(disk.status()).replace("DISK_", ""),
                        bytes(disk.usableBytes()),
                        disk.activeSlots());
                first = false;
            }
        }
        t.print(out);
        if (workers.isEmpty()) out.println("(no registered workers)");
        warnMixed(versions, out);
    }

    private void apps() throws CliException {
        AdminViews.Applications as = masters.read("/api/applications", AdminViews.Applications.class);
        if (json) {
            out.println(AdminJson.write(as));
            return;
        }
        Table t = new Table("APPLICATION", "SHUFFLES");
        for (AdminViews.Application a : as.applications())
            t.row(a.id(), a.shuffles().size());
        t.print(out);
    }

    private void shuffles(String app) throws CliException {
        AdminViews.Shuffles as = masters.read(
                "/api/shuffles" + (app == null ? "" : "?app=" + MasterHttp.encode(app)), AdminViews.Shuffles.class);
        if (json) {
            out.println(AdminJson.write(as));
            return;
        }
        Table t = new Table("APPLICATION", "SHUFFLE", "PARTITIONS", "LOCATIONS", "WORKERS");
        for (AdminViews.ApplicationShuffles a : as.applications()) {
            for (AdminViews.ShuffleDetail sh : a.shuffles()) {
                t.row(a.id(), sh.id(), sh.partitions(), sh.locations(), String.join(",", sh.workers()));
            }
        }
        t.print(out);
    }

    private void setState(String action, String worker) throws CliException {
        String id = resolveWorker(worker);
        AdminViews.WorkerStateSet r = masters.write(
                "/api/workers/" + action + "?id=" + MasterHttp.encode(id), AdminViews.WorkerStateSet.class);
        if (json) out.println(AdminJson.write(r));
        else out.println("worker " + id + " is now " + r.state());
    }

    private void transfer(String to) throws CliException {
        AdminViews.LeadershipTransfer r = masters.write(
                "/api/leadership/transfer?to=" + MasterHttp.encode(to), AdminViews.LeadershipTransfer.class);
        // Wait (bounded) until the masters say so, so that the next command finds the new leader.
        long deadline = System.currentTimeMillis() + 15_000;
        while (System.currentTimeMillis() < deadline) {
            Map<String, MasterStatus> st = masters.freshStatuses();
            String leader = MasterHttp.leader(st);
            MasterStatus s = leader == null ? null : st.get(leader);
            if (s != null && to.equals(s.id())) break;
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (json) out.println(AdminJson.write(r));
        else out.println(!r.changed() ? to + " already leads" : to + " leads now");
    }

    // ---- helpers ----

    /** The worker's full id from a full id or an unambiguous prefix (host:rpcPort). */
    private String resolveWorker(String given) throws CliException {
        List<String> ids = new ArrayList<>();
        for (Worker w : masters.read("/api/workers", AdminViews.Workers.class).workers()) ids.add(w.id());
        if (ids.contains(given)) return given;
        List<String> matches = new ArrayList<>();
        for (String id : ids) if (id.startsWith(given + ":")) matches.add(id);
        if (matches.size() == 1) return matches.get(0);
        if (matches.isEmpty()) {
            throw new CliException(
                    CliException.FAILED,
                    "unknown worker '" + given + "'; registered workers: "
                            + (ids.isEmpty() ? "none" : String.join(", ", ids)));
        }
        throw new CliException(
                CliException.FAILED, "'" + given + "' names several workers: " + String.join(", ", matches));
    }

    /** A {@link MasterRow} being joined from several answers. */
    private static final class Row {
        String id;
        String role = "unreachable";
        Long term;
        String version;
        String http;
        String rpc;

        MasterRow done() {
            return new MasterRow(id, role, term, version, http, rpc);
        }
    }

    /**
     * One row per master: every master of the group (from any master's /api/masters) joined with what each master
     * given on the command line says of itself; masters that do not answer show as unreachable.
     */
    private List<MasterRow> masterRows() throws CliException {
        Map<String, MasterStatus> statuses = masters.statuses();
        if (statuses.values().stream().allMatch(s -> s == null)) {
            throw new CliException(
                    CliException.UNREACHABLE,
                    "no master answered at " + String.join(", ", masters.endpoints())
                            + " (give the masters' HTTP addresses with --master)");
        }
        Map<String, Row> rows = new LinkedHashMap<>();
        for (AdminViews.MasterEntry m :
                masters.read("/api/masters", AdminViews.Masters.class).masters()) {
            Row row = new Row();
            row.id = m.id();
            row.rpc = m.rpc();
            rows.put(String.valueOf(m.id()), row);
        }
        List<String> silent = new ArrayList<>();
        for (Map.Entry<String, MasterStatus> e : statuses.entrySet()) {
            MasterStatus s = e.getValue();
            if (s == null) {
                silent.add(e.getKey());
                continue;
            }
            Row row = rows.computeIfAbsent(String.valueOf(s.id()), k -> {
                Row r = new Row();
                r.id = s.id();
                return r;
            });
            row.role = s.role();
            row.term = s.term();
            row.version = s.version();
            row.http = e.getKey();
        }
        // A master that does not answer has no id we could learn: pin its address on the one group member left
        // unmatched on that host, or list it on its own.
        for (String endpoint : silent) {
            String host = endpoint.substring(0, endpoint.lastIndexOf(':'));
            List<Row> candidates = new ArrayList<>();
            for (Row r : rows.values())
                if (r.http == null && r.rpc != null && r.rpc.startsWith(host + ":")) candidates.add(r);
            if (candidates.size() == 1) {
                candidates.get(0).http = endpoint;
            } else {
                Row r = new Row();
                r.http = endpoint;
                rows.put("?" + endpoint, r);
            }
        }
        List<MasterRow> out = new ArrayList<>();
        for (Row r : rows.values()) out.add(r.done());
        return out;
    }

    /** Which nodes run which version: version -> node names (master ids, worker ids). */
    private static Map<String, List<String>> versions(List<MasterRow> masterRows, List<Worker> workers) {
        Map<String, List<String>> out = new TreeMap<>();
        for (MasterRow m : masterRows) {
            if (m.version() != null)
                out.computeIfAbsent(m.version(), v -> new ArrayList<>()).add("master " + display(m.id()));
        }
        for (Worker w : workers) {
            out.computeIfAbsent(String.valueOf(w.version()), v -> new ArrayList<>())
                    .add("worker " + w.id());
        }
        return out;
    }

    private static void warnMixed(Map<String, List<String>> versions, PrintStream to) {
        if (versions.size() <= 1) return;
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : versions.entrySet()) {
            List<String> nodes = e.getValue();
            String named = String.join(", ", nodes.subList(0, Math.min(nodes.size(), 4)))
                    + (nodes.size() > 4
                            ? " and " + (nodes.size() - 4) + " more"
                            : ""); // thousands of workers: a sample
            parts.add(
                    e.getKey() + " on " + nodes.size() + " node" + (nodes.size() == 1 ? "" : "s") + " (" + named + ")");
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
