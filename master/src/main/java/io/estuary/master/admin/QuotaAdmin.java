package io.estuary.master.admin;

import io.estuary.common.config.ConfigException;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.Quota;
import io.estuary.master.protocol.QuotaRemoved;
import io.estuary.master.protocol.QuotaScope;
import io.estuary.master.protocol.QuotaSet;
import io.estuary.master.quota.Admission;
import io.estuary.master.quota.QuotaBook;
import io.estuary.master.quota.QuotaSpec;
import io.estuary.master.quota.QuotaUsage;
import io.estuary.master.state.MasterState;
import io.estuary.server.admin.AdminHttpServer.Request;
import io.estuary.server.admin.AdminHttpServer.Response;
import io.estuary.server.admin.AdminViews;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The quota routes of {@link MasterAdminEndpoint}: {@code GET /api/quotas} (every scope with a quota set or a live
 * application, its quota and use), {@code POST /api/quotas/set?scope=&name=&quota=} and {@code
 * POST /api/quotas/remove?scope=&name=} (leader only; through the replicated log, so every master agrees and a
 * restart keeps them). A quota that does not parse gets 400 naming the part; a group with a master that cannot apply
 * quotas (release 0.1.0) 409. Thread-safe: holds nothing of its own.
 */
final class QuotaAdmin {
    private final AdministeredMaster master;
    private final Supplier<AdminViews.ServedBy> servedBy;
    private final Supplier<Response> notLeader;

    QuotaAdmin(AdministeredMaster master, Supplier<AdminViews.ServedBy> servedBy, Supplier<Response> notLeader) {
        this.master = master;
        this.servedBy = servedBy;
        this.notLeader = notLeader;
    }

    Response list(Request r) {
        return Response.json(200, new AdminViews.Quotas(servedBy.get(), entries()));
    }

    /** Every scope worth showing: the cluster, and each tenant and user with a quota set or a live application. */
    List<AdminViews.QuotaEntry> entries() {
        Admission admission = master.admission();
        boolean reports = master.isLeader();
        return master.state(s -> {
            Map<String, QuotaBook.Member> census = QuotaBook.census(
                    s,
                    reports
                            ? admission.usage().byApplication(s)
                            : Collections.<String, QuotaUsage.ApplicationUse>emptyMap(),
                    master::principalOf);
            TreeSet<String> tenants = new TreeSet<>();
            TreeSet<String> users = new TreeSet<>();
            for (Quota q : s.quotas()) {
                if (q.getScope() == QuotaScope.QUOTA_TENANT) tenants.add(q.getName());
                if (q.getScope() == QuotaScope.QUOTA_USER) users.add(q.getName());
            }
            for (QuotaBook.Member m : census.values()) {
                ApplicationPrincipal p = m.principal;
                if (p == null) continue;
                users.add(p.getUser());
                if (!p.getTenant().isEmpty()) tenants.add(p.getTenant());
            }
            List<AdminViews.QuotaEntry> out = new ArrayList<>();
            out.add(entry(s, admission.book(), QuotaScope.QUOTA_CLUSTER, "", census, reports));
            for (String t : tenants) out.add(entry(s, admission.book(), QuotaScope.QUOTA_TENANT, t, census, reports));
            for (String u : users) out.add(entry(s, admission.book(), QuotaScope.QUOTA_USER, u, census, reports));
            return out;
        });
    }

    private AdminViews.QuotaEntry entry(
            MasterState s,
            QuotaBook book,
            QuotaScope scope,
            String name,
            Map<String, QuotaBook.Member> census,
            boolean reports) {
        Quota q = book.effective(s, scope, name);
        QuotaBook.Use use = QuotaBook.useOf(q, census);
        List<String> reached = new ArrayList<>();
        if (q.getMaxShuffles() > 0 && use.shuffles >= q.getMaxShuffles()) reached.add("shuffles");
        if (q.getMaxSlots() > 0 && use.slots >= q.getMaxSlots()) reached.add("slots");
        if (reports && q.getMaxBytes() > 0 && use.bytes >= q.getMaxBytes()) reached.add("bytes");
        if (reports && q.getMaxFiles() > 0 && use.files >= q.getMaxFiles()) reached.add("files");
        if (reports && q.getMaxPushBytesPerSecond() > 0 && use.pushBytesPerSecond >= q.getMaxPushBytesPerSecond())
            reached.add("pushRate");
        return new AdminViews.QuotaEntry(
                QuotaSpec.label(scope),
                name,
                QuotaBook.isDefault(s, scope, name) ? "default" : "operator",
                QuotaSpec.describe(q),
                use.applications.size(),
                use.shuffles,
                use.slots,
                reports ? use.bytes : null,
                reports ? use.files : null,
                reports ? use.pushBytesPerSecond : null,
                reached);
    }

    Response set(Request r) {
        QuotaScope scope;
        String name;
        Quota q;
        try {
            scope = QuotaSpec.scope("scope", r.query("scope"));
            name = name(scope, r.query("name"));
            String text = r.query("quota") == null ? "" : r.query("quota");
            q = QuotaSpec.parse("quota", scope, name, text);
        } catch (ConfigException e) {
            return Response.error(400, e.getMessage());
        }
        if (!master.isLeader()) return notLeader.get();
        Response failed = LoggedChange.submit(
                master,
                MasterCommand.newBuilder()
                        .setQuotaSet(QuotaSet.newBuilder().setQuota(q))
                        .build(),
                "quota");
        if (failed != null) return failed;
        return Response.json(200, new AdminViews.QuotaChanged(QuotaSpec.label(scope), name, QuotaSpec.describe(q)));
    }

    Response remove(Request r) {
        QuotaScope scope;
        String name;
        try {
            scope = QuotaSpec.scope("scope", r.query("scope"));
            name = name(scope, r.query("name"));
        } catch (ConfigException e) {
            return Response.error(400, e.getMessage());
        }
        if (!master.isLeader()) return notLeader.get();
        if (master.state(s -> s.quota(scope, name)) == null) {
            return Response.error(
                    404, "no quota set for " + QuotaSpec.scopeName(scope, name) + " (its configured default applies)");
        }
        Response failed = LoggedChange.submit(
                master,
                MasterCommand.newBuilder()
                        .setQuotaRemoved(
                                QuotaRemoved.newBuilder().setScope(scope).setName(name))
                        .build(),
                "quota");
        if (failed != null) return failed;
        String now =
                master.state(s -> QuotaSpec.describe(master.admission().book().effective(s, scope, name)));
        return Response.json(200, new AdminViews.QuotaChanged(QuotaSpec.label(scope), name, now));
    }

    /** A scope's name as given: none for the cluster, a valid user or tenant name otherwise. */
    static String name(QuotaScope scope, String name) {
        String n = name == null ? "" : name.trim();
        if (scope == QuotaScope.QUOTA_CLUSTER) {
            if (!n.isEmpty()) throw new ConfigException("name: the cluster's quota takes no name (got '" + n + "')");
            return "";
        }
        String what = scope == QuotaScope.QUOTA_USER ? "user" : "tenant";
        if (n.isEmpty()) throw new ConfigException("name: give the " + what);
        String problem = io.estuary.network.rpc.RequestIds.principalProblem(
                "name",
                scope == QuotaScope.QUOTA_USER
                        ? ApplicationPrincipal.newBuilder().setUser(n).build()
                        : ApplicationPrincipal.newBuilder().setTenant(n).build());
        if (problem != null) throw new ConfigException(problem);
        return n;
    }
}
