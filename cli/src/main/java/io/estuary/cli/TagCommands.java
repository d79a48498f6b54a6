package io.estuary.cli;

import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import java.io.PrintStream;
import java.util.List;

/**
 * {@code estuary tags}: every worker's tags (declared in its configuration, added and removed by operators, and the
 * ones placements match) and the default expressions ({@code GET /api/tags}); and the operators' changes, through
 * the leader, kept in the masters' replicated state: {@code add} and {@code remove} a worker's tags, {@code default}
 * to set (or, without an expression, clear) the expression every application of a user, tenant or the cluster is held
 * to. Confined to the thread that runs the command line.
 */
final class TagCommands {
    static final String USAGE = String.join(
            "\n",
            "  tags                           every worker's tags (declared, added, removed) and the default expressions",
            "  tags add|remove <worker> TAG...",
            "                                 add tags to a worker, or remove them (its declared ones too)",
            "  tags default <user NAME|tenant NAME|cluster> [EXPRESSION]",
            "                                 hold every application of the scope to EXPRESSION (ANDed with its own",
            "                                 estuary.client.tags); without one, clear it");

    private final MasterHttp masters;
    private final ClusterCommands cluster;
    private final boolean json;
    private final PrintStream out;

    TagCommands(MasterHttp masters, ClusterCommands cluster, boolean json, PrintStream out) {
        this.masters = masters;
        this.cluster = cluster;
        this.json = json;
        this.out = out;
    }

    /** Runs {@code estuary tags [add|remove|default ...]} with the words after "tags". */
    void run(List<String> words) throws CliException {
        if (words.isEmpty()) {
            list();
            return;
        }
        String action = words.get(0);
        switch (action) {
            case "add":
            case "remove": {
                if (words.size() < 3) {
                    throw new CliException(CliException.USAGE, "tags " + action + " needs a worker and tags");
                }
                String id = cluster.resolveWorker(words.get(1));
                String tags = String.join(",", words.subList(2, words.size()));
                AdminViews.WorkerTagsSet r = masters.write(
                        "/api/tags/worker?id=" + MasterHttp.encode(id) + "&" + action + "=" + MasterHttp.encode(tags),
                        AdminViews.WorkerTagsSet.class);
                if (json) out.println(AdminJson.write(r));
                else out.println("worker " + id + ": added " + shown(r.added()) + ", removed " + shown(r.removed()));
                return;
            }
            case "default": {
                ScopeWords at = ScopeWords.parse(words, 1, "tags default");
                String scope = at.scope;
                String name = at.name;
                String expression = String.join(" ", words.subList(at.next, words.size()));
                AdminViews.DefaultTagsChanged r = masters.write(
                        "/api/tags/default?scope=" + MasterHttp.encode(scope) + "&name=" + MasterHttp.encode(name)
                                + "&expression=" + MasterHttp.encode(expression),
                        AdminViews.DefaultTagsChanged.class);
                if (json) out.println(AdminJson.write(r));
                else {
                    String who = ScopeWords.who(r.scope(), r.name());
                    out.println(
                            r.expression().isEmpty()
                                    ? "no default expression for " + who
                                    : "applications of " + who + " are held to '" + r.expression() + "'");
                }
                return;
            }
            default:
                throw new CliException(
                        CliException.USAGE, "unknown tags command '" + action + "'; try add, remove or default");
        }
    }

    private void list() throws CliException {
        AdminViews.Tags ts = masters.read("/api/tags", AdminViews.Tags.class);
        if (json) {
            out.println(AdminJson.write(ts));
            return;
        }
        Table t = new Table("WORKER", "DECLARED", "ADDED", "REMOVED", "TAGS");
        for (AdminViews.WorkerTagsEntry w : ts.workers()) {
            t.row(
                    w.worker(),
                    w.declared() == null ? "?" : shown(w.declared()),
                    shown(w.added()),
                    shown(w.removed()),
                    w.tags() == null ? "?" : shown(w.tags()));
        }
        t.print(out);
        if (!ts.defaults().isEmpty()) {
            out.println();
            Table d = new Table("SCOPE", "NAME", "DEFAULT EXPRESSION");
            for (AdminViews.DefaultTagsEntry e : ts.defaults()) {
                d.row(e.scope(), e.name().isEmpty() ? "-" : e.name(), e.expression());
            }
            d.print(out);
        }
    }

    private static String shown(List<String> tags) {
        return tags.isEmpty() ? "-" : String.join(",", tags);
    }
}
