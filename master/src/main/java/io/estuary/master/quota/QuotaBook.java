package io.estuary.master.quota;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.master.protocol.Quota;
import io.estuary.master.protocol.QuotaScope;
import io.estuary.master.state.MasterState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Which quotas apply to an application and what each scope uses. A scope's quota is the one operators set (kept in
 * the agreed state, {@link MasterState#quota}) or else the configured default: {@code estuary.master.quota.cluster}
 * for the cluster, {@code .tenant} for each tenant, {@code .user} for each user. Use is what the scope's applications
 * hold: shuffles and slots from the agreed state, bytes, files and push rate from the workers' reports ({@link
 * QuotaUsage}). Immutable apart from the usage it reads; thread-safe.
 */
public final class QuotaBook {
    private final Quota clusterDefault;
    private final Quota tenantDefault;
    private final Quota userDefault;

    /** @throws io.estuary.common.config.ConfigException naming the key of a default that does not parse */
    public QuotaBook(EstuaryConf conf) {
        this.clusterDefault = QuotaSpec.parse(
                MasterConfig.QUOTA_CLUSTER.key(), QuotaScope.QUOTA_CLUSTER, "", conf.get(MasterConfig.QUOTA_CLUSTER));
        this.tenantDefault = QuotaSpec.parse(
                MasterConfig.QUOTA_TENANT.key(), QuotaScope.QUOTA_TENANT, "", conf.get(MasterConfig.QUOTA_TENANT));
        this.userDefault = QuotaSpec.parse(
                MasterConfig.QUOTA_USER.key(), QuotaScope.QUOTA_USER, "", conf.get(MasterConfig.QUOTA_USER));
    }

    /** The quota of a scope: the operators' one, else the default (named for the scope). */
    public Quota effective(MasterState s, QuotaScope scope, String name) {
        Quota set = s.quota(scope, name);
        if (set != null) return set;
        Quota d = scope == QuotaScope.QUOTA_CLUSTER
                ? clusterDefault
                : scope == QuotaScope.QUOTA_TENANT ? tenantDefault : userDefault;
        return d.toBuilder().setName(name).build();
    }

    /** Whether {@code effective(s, scope, name)} is the configured default, not one operators set. */
    public static boolean isDefault(MasterState s, QuotaScope scope, String name) {
        return s.quota(scope, name) == null;
    }

    /**
     * The quotas that limit anything for an application of {@code who} (null: nobody bound): the cluster's, its
     * tenant's (when it has one) and its user's, in that order.
     */
    public List<Quota> applicable(MasterState s, ApplicationPrincipal who) {
        List<Quota> out = new ArrayList<>(3);
        add(out, effective(s, QuotaScope.QUOTA_CLUSTER, ""));
        if (who != null && !who.getTenant().isEmpty()) add(out, effective(s, QuotaScope.QUOTA_TENANT, who.getTenant()));
        if (who != null) add(out, effective(s, QuotaScope.QUOTA_USER, who.getUser()));
        return out;
    }

    private static void add(List<Quota> out, Quota q) {
        if (QuotaSpec.limitsAnything(q)) out.add(q);
    }

    /** Whether an application of {@code who} belongs to the scope of {@code q}. */
    public static boolean inScope(Quota q, ApplicationPrincipal who) {
        switch (q.getScope()) {
            case QUOTA_USER:
                return who != null && who.getUser().equals(q.getName());
            case QUOTA_TENANT:
                return who != null && who.getTenant().equals(q.getName());
            default:
                return true;
        }
    }

    /** What a scope's applications hold and push. */
    public static final class Use {
        public long bytes;
        public long files;
        public long shuffles;
        public long slots;
        public long pushBytesPerSecond;
        /** The scope's applications, by id. */
        public final List<String> applications = new ArrayList<>();
    }

    /** One application as quotas see it: who runs it and what it holds. */
    public static final class Member {
        public final ApplicationPrincipal principal;
        long shuffles;
        long slots;
        long bytes;
        long files;
        long pushBytesPerSecond;

        Member(ApplicationPrincipal principal) {
            this.principal = principal;
        }
    }

    /**
     * Every registered application with who runs it and what it holds, read once (one pass over the placements) for
     * all the scopes a caller then sums: {@code reported}, what workers report ({@link QuotaUsage#byApplication}; empty
     * where none is known).
     */
    public static Map<String, Member> census(
            MasterState s,
            Map<String, QuotaUsage.ApplicationUse> reported,
            Function<String, ApplicationPrincipal> principalOf) {
        Map<String, Member> out = new java.util.LinkedHashMap<>();
        for (String app : s.applicationIds()) {
            Member m = new Member(principalOf.apply(app));
            for (List<PartitionLocation> locs : s.shuffles(app).values()) {
                m.shuffles++;
                m.slots += slots(locs);
            }
            QuotaUsage.ApplicationUse r = reported.get(app);
            if (r != null) {
                m.bytes = r.bytes;
                m.files = r.files;
                m.pushBytesPerSecond = r.pushBytesPerSecond;
            }
            out.put(app, m);
        }
        return out;
    }

    /** What the applications in the scope of {@code q} use, summed from a {@link #census}. */
    public static Use useOf(Quota q, Map<String, Member> census) {
        Use use = new Use();
        for (Map.Entry<String, Member> e : census.entrySet()) {
            Member m = e.getValue();
            if (!inScope(q, m.principal)) continue;
            use.applications.add(e.getKey());
            use.shuffles += m.shuffles;
            use.slots += m.slots;
            use.bytes += m.bytes;
            use.files += m.files;
            use.pushBytesPerSecond += m.pushBytesPerSecond;
        }
        return use;
    }

    /** Location copies: each location, and its peer when replicated. */
    public static long slots(List<PartitionLocation> locs) {
        long n = 0;
        for (PartitionLocation l : locs) n += l.hasPeer() ? 2 : 1;
        return n;
    }
}
