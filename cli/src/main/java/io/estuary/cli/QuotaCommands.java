package io.estuary.cli;

import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import java.io.PrintStream;
import java.util.List;

/**
 * {@code estuary quota}: each scope's quota and use ({@code GET /api/quotas}), and the operators' changes to them
 * ({@code set}, {@code remove}: through the leader, kept in the masters' replicated state). A quota is given as
 * {@code name=value} words, e.g. {@code estuary quota set user alice bytes=10g shuffles=20 policy=wait maxWait=5min};
 * the master checks it and says which word is wrong. Confined to the thread that runs the command line.
 */
final class QuotaCommands {
    static final String USAGE = String.join(
            "\n",
            "  quota                          each scope's quota (the cluster, tenants, users) and what it uses",
            "  quota set <user NAME|tenant NAME|cluster> PART...",
            "                                 set a scope's quota; PARTs: bytes=, files=, shuffles=, slots=,",
            "                                 pushRate= (0: no limit), policy=refuse|wait, maxWait=, overBytes=warn|stop",
            "  quota remove <user NAME|tenant NAME|cluster>",
            "                                 drop a scope's quota: the configured default applies again");

    private final MasterHttp masters;
    private final boolean json;
    private final PrintStream out;

    QuotaCommands(MasterHttp masters, boolean json, PrintStream out) {
        this.masters = masters;
        this.json = json;
        this.out = out;
    }

    /** Runs {@code estuary quota [set|remove ...]} with the words after "quota". */
    void run(List<String> words) throws CliException {
        if (words.isEmpty()) {
            list();
            return;
        }
        String action = words.get(0);
        if (!action.equals("set") && !action.equals("remove")) {
            throw new CliException(CliException.USAGE, "unknown quota command '" + action + "'; try set or remove");
        }
        ScopeWords at = ScopeWords.parse(words, 1, "quota " + action);
        String scope = at.scope;
        String name = at.name;
        List<String> parts = words.subList(at.next, words.size());
        String path = "/api/quotas/" + action + "?scope=" + scope + "&name=" + MasterHttp.encode(name);
        if (action.equals("set")) {
            if (parts.isEmpty()) {
                throw new CliException(CliException.USAGE, "quota set needs the quota's parts, e.g. bytes=10g");
            }
            path += "&quota=" + MasterHttp.encode(String.join(",", parts));
        } else if (!parts.isEmpty()) {
            throw new CliException(CliException.USAGE, "quota remove takes no parts, got " + parts);
        }
        AdminViews.QuotaChanged r = masters.write(path, AdminViews.QuotaChanged.class);
        if (json) {
            out.println(AdminJson.write(r));
            return;
        }
        String who = ScopeWords.who(r.scope(), r.name());
        out.println(
                action.equals("set")
                        ? "quota of " + who + " is now " + shown(r.quota())
                        : "quota of " + who + " removed; the default applies: " + shown(r.quota()));
    }

    private void list() throws CliException {
        AdminViews.Quotas qs = masters.read("/api/quotas", AdminViews.Quotas.class);
        if (json) {
            out.println(AdminJson.write(qs));
            return;
        }
        Table t = new Table(
                "SCOPE", "NAME", "SOURCE", "QUOTA", "APPS", "SHUFFLES", "SLOTS", "BYTES", "FILES", "PUSH/S", "REACHED");
        for (AdminViews.QuotaEntry e : qs.quotas()) {
            t.row(
                    e.scope(),
                    e.name().isEmpty() ? "-" : e.name(),
                    e.source(),
                    shown(e.quota()),
                    e.applications(),
                    e.shuffles(),
                    e.slots(),
                    e.bytes() == null ? "?" : ClusterCommands.bytes(e.bytes()),
                    e.files() == null ? "?" : e.files(),
                    e.pushBytesPerSecond() == null ? "?" : ClusterCommands.bytes(e.pushBytesPerSecond()),
                    e.reached().isEmpty() ? "-" : String.join(",", e.reached()));
        }
        t.print(out);
        if (!"leader".equals(qs.servedBy().role())
                && !"single".equals(qs.servedBy().role())) {
            out.println("(bytes, files and push rates are known to the leader only: none answered)");
        }
    }

    private static String shown(String quota) {
        return quota.isEmpty() ? "no limit" : quota;
    }
}
