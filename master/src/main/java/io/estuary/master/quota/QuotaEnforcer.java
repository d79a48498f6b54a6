package io.estuary.master.quota;

import io.estuary.common.protocol.ApplicationHeartbeatResponse;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.StoppedShuffle;
import io.estuary.master.protocol.Quota;
import io.estuary.master.protocol.QuotaScope;
import io.estuary.master.state.MasterState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Running applications against their bytes quotas, on the leader's periodic check. Every application in a scope
 * holding more bytes than its quota is told so with each heartbeat answer; under a quota with {@code overBytes=stop}
 * the largest shuffle of an application not marked high priority is stopped (the caller unregisters it through the
 * log) until the scope's bytes fit, and its driver is told why in its next answers. Shuffles of the state only count
 * ({@link QuotaUsage#byApplication}), so a stopped one stops counting at once. What it tells is the leader's memory:
 * a new leader tells again from its own check. Thread-safe.
 */
public final class QuotaEnforcer {
    private final QuotaBook book;
    private final QuotaUsage usage;
    /** The warnings of the newest check, by application. */
    private volatile Map<String, List<String>> warnings = Collections.emptyMap();
    /** Shuffles stopped, by application then shuffle id, with the reason; until the application goes. */
    private final Map<String, Map<Integer, String>> stopped = new ConcurrentHashMap<>();

    public QuotaEnforcer(QuotaBook book, QuotaUsage usage) {
        this.book = book;
        this.usage = usage;
    }

    /** A shuffle to stop: its application, id and why. */
    public static final class Stop {
        public final String app;
        public final int shuffleId;
        public final String reason;

        Stop(String app, int shuffleId, String reason) {
            this.app = app;
            this.shuffleId = shuffleId;
            this.reason = reason;
        }
    }

    /**
     * One check: recomputes every application's warnings and returns the shuffles to stop now (the caller logs their
     * unregistration). {@code principalOf} says who runs each application.
     */
    public List<Stop> check(MasterState s, Function<String, ApplicationPrincipal> principalOf) {
        stopped.keySet().removeIf(app -> !s.hasApplication(app)); // ended or expired meanwhile
        Map<String, QuotaBook.Member> census = QuotaBook.census(s, usage.byApplication(s), principalOf);
        Map<String, List<String>> told = new HashMap<>();
        List<Stop> stops = new ArrayList<>();
        for (Quota q : scopes(s, census)) {
            if (q.getMaxBytes() <= 0) continue;
            QuotaBook.Use use = QuotaBook.useOf(q, census);
            if (use.bytes <= q.getMaxBytes()) continue;
            String over = QuotaSpec.scopeName(q.getScope(), q.getName()) + " holds " + Admission.bytes(use.bytes)
                    + " on workers, over its quota of " + Admission.bytes(q.getMaxBytes());
            for (String app : use.applications)
                told.computeIfAbsent(app, a -> new ArrayList<>()).add(over);
            if (!q.getStopLargest()) continue;
            long excess = use.bytes - q.getMaxBytes();
            // The largest shuffles first, of applications that are not high priority, until the excess is gone.
            List<long[]> candidates = new ArrayList<>(); // {application index, shuffle id, bytes}
            for (int i = 0; i < use.applications.size(); i++) {
                String app = use.applications.get(i);
                ApplicationPrincipal who = census.get(app).principal;
                if (who != null && who.getHighPriority()) continue;
                for (Map.Entry<Integer, Long> e : usage.shuffleBytes(app).entrySet()) {
                    if (s.isShufflePlaced(app, e.getKey())) candidates.add(new long[] {i, e.getKey(), e.getValue()});
                }
            }
            candidates.sort((a, b) -> Long.compare(b[2], a[2]));
            for (long[] c : candidates) {
                if (excess <= 0) break;
                String app = use.applications.get((int) c[0]);
                String reason =
                        over + " (overBytes=stop): its largest shuffle, " + Admission.bytes(c[2]) + ", is stopped";
                if (stopped.computeIfAbsent(app, a -> new ConcurrentHashMap<>()).putIfAbsent((int) c[1], reason)
                        == null) {
                    stops.add(new Stop(app, (int) c[1], reason));
                }
                excess -= c[2];
            }
        }
        warnings = told;
        return stops;
    }

    /** The cluster, every tenant and user of a live application, and every scope with a quota set. */
    private List<Quota> scopes(MasterState s, Map<String, QuotaBook.Member> census) {
        Set<String> tenants = new LinkedHashSet<>();
        Set<String> users = new LinkedHashSet<>();
        for (QuotaBook.Member m : census.values()) {
            ApplicationPrincipal p = m.principal;
            if (p == null) continue;
            users.add(p.getUser());
            if (!p.getTenant().isEmpty()) tenants.add(p.getTenant());
        }
        List<Quota> out = new ArrayList<>();
        out.add(book.effective(s, QuotaScope.QUOTA_CLUSTER, ""));
        for (String t : tenants) out.add(book.effective(s, QuotaScope.QUOTA_TENANT, t));
        for (String u : users) out.add(book.effective(s, QuotaScope.QUOTA_USER, u));
        return out;
    }

    /** What a heartbeat of {@code app} is answered: its warnings and the shuffles stopped. */
    public ApplicationHeartbeatResponse answer(String app) {
        ApplicationHeartbeatResponse.Builder b = ApplicationHeartbeatResponse.newBuilder()
                .addAllQuotaWarnings(warnings.getOrDefault(app, Collections.emptyList()));
        Map<Integer, String> mine = stopped.get(app);
        if (mine != null) {
            for (Map.Entry<Integer, String> e : mine.entrySet()) {
                b.addStoppedShuffles(
                        StoppedShuffle.newBuilder().setShuffleId(e.getKey()).setReason(e.getValue()));
            }
        }
        return b.build();
    }

    /** The application ended or expired. */
    public void forget(String app) {
        stopped.remove(app);
    }

    /** This master gained or lost leadership: it tells only what its own checks find. */
    public void clear() {
        stopped.clear();
        warnings = Collections.emptyMap();
    }
}
