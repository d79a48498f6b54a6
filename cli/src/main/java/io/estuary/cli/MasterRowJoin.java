package io.estuary.cli;

import io.estuary.cli.CliViews.MasterRow;
import io.estuary.server.admin.AdminViews;
import io.estuary.server.admin.AdminViews.MasterStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Joins the masters' answers into one {@link MasterRow} per master, for {@code estuary status} and {@code estuary
 * masters}. Stateless.
 */
final class MasterRowJoin {
    private MasterRowJoin() {}

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
    static List<MasterRow> rows(MasterHttp masters) throws CliException {
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
}
