package io.estuary.cli;

import io.estuary.cli.CliViews.MasterRow;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import io.estuary.server.admin.AdminViews.MasterStatus;
import io.estuary.server.admin.AdminViews.Worker;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The commands of {@link EstuaryCli}, each run once against the masters: reads print a table, or with {@code --json}
 * the view as JSON; changes go to the leader ({@link MasterHttp} follows it). Failures are {@link CliException}s with
 * the exit code. Confined to the thread that runs the command line.
 */
final class ClusterCommands {
    private final MasterHttp masters;
    private final boolean json;
    private final PrintStream out;
    private final PrintStream err;

    ClusterCommands(MasterHttp masters, boolean json, PrintStream out, PrintStream err) {
        this.masters = masters;
        this.json = json;
        this.out = out;
        this.err = err;
    }

    void status() throws CliException {
        List<MasterRow> ms = MasterRowJoin.rows(masters);
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

    void masters() throws CliException {
        List<MasterRow> ms = MasterRowJoin.rows(masters);
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

    void workers() throws CliException {
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

    void apps() throws CliException {
        AdminViews.Applications as = masters.read("/api/applications", AdminViews.Applications.class);
        if (json) {
            out.println(AdminJson.write(as));
            return;
        }
        Table t = new Table("APPLICATION", "USER", "TENANT", "PRIORITY", "SHUFFLES");
        for (AdminViews.Application a : as.applications())
            t.row(
                    a.id(),
                    a.user(),
                    a.tenant(),
                    a.highPriority() ? "high" : "normal",
                    a.shuffles().size());
        t.print(out);
    }

    void shuffles(String app) throws CliException {
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

    void setState(String action, String worker) throws CliException {
        String id = resolveWorker(worker);
        AdminViews.WorkerStateSet r = masters.write(
                "/api/workers/" + action + "?id=" + MasterHttp.encode(id), AdminViews.WorkerStateSet.class);
        if (json) out.println(AdminJson.write(r));
        else out.println("worker " + id + " is now " + r.state());
    }

    void transfer(String to) throws CliException {
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
    String resolveWorker(String given) throws CliException {
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

    static String bytes(long b) {
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
}
