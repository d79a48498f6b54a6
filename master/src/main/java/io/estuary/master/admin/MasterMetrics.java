package io.estuary.master.admin;

import io.estuary.network.auth.AuthFailure;
import io.estuary.network.server.TransportObserver;
import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.GaugeMetricFamily;
import io.prometheus.client.Histogram;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The master's Prometheus metrics. One registry per master (not the global one), so several masters in one JVM
 * (tests) do not clash.
 */
public final class MasterMetrics {
    private final CollectorRegistry registry = new CollectorRegistry();
    private final Counter slotRequests;
    private final Counter slotRequestFailures;
    private final Counter slotLeases;
    private final Counter placementsRecorded;
    private final Histogram slotRequestSeconds;
    private final Counter reviveSlotRequests;
    private final Counter workerFailureReports;
    private final Counter authorizationRefusals;

    /** The requests a master authorizes, so each has its refusal counts from the start. */
    private static final String[] AUTHORIZED_REQUESTS = {
        "register_worker",
        "worker_heartbeat",
        "application_heartbeat",
        "request_slots",
        "revive_slots",
        "lease_slots",
        "record_placement",
        "report_worker_failures",
        "unregister_shuffle",
        "unregister_application"
    };

    private final Counter authFailures;
    private final Counter admittedUnchecked;
    private final Counter registrationsThrottled;
    private final QuotaMetrics quotas;

    public MasterMetrics(AdministeredMaster master) {
        io.estuary.server.admin.BuildInfo.register(registry, "master", master.version());
        io.estuary.server.admin.JvmMetrics.register(registry);
        slotRequests = Counter.build("estuary_master_slot_requests_total", "Slot requests answered by this master.")
                .register(registry);
        slotRequestFailures = Counter.build("estuary_master_slot_request_failures_total", "Slot requests that failed.")
                .register(registry);
        slotLeases = Counter.build(
                        "estuary_master_slot_leases_total",
                        "Slot leases handed to drivers, which then place shuffles without asking for their slots.")
                .register(registry);
        placementsRecorded = Counter.build(
                        "estuary_master_recorded_placements_total",
                        "Placements drivers made under a slot lease and reported to this master.")
                .register(registry);
        slotRequestSeconds = Histogram.build(
                        "estuary_master_slot_request_seconds", "Time from a slot request to its answer.")
                .buckets(0.001, 0.005, 0.02, 0.1, 0.5, 2, 10)
                .register(registry);
        reviveSlotRequests = Counter.build(
                        "estuary_master_revive_slot_requests_total",
                        "Requests for new locations of running shuffles' partitions (revives and splits) answered by this master.")
                .register(registry);
        workerFailureReports = Counter.build(
                        "estuary_master_worker_failure_reports_total",
                        "Reports from applications about workers failing them.")
                .register(registry);
        authorizationRefusals = Counter.build(
                        "estuary_master_authorization_refusals_total",
                        "Requests refused because the connection's identity may not make them: UNAUTHENTICATED (it "
                                + "proved none) or FORBIDDEN (another application's state, or a call for servers "
                                + "only), by request type.")
                .labelNames("request", "status")
                .register(registry);
        for (String r : AUTHORIZED_REQUESTS) {
            authorizationRefusals.labels(r, "UNAUTHENTICATED");
            authorizationRefusals.labels(r, "FORBIDDEN");
        }
        authFailures = Counter.build(
                        "estuary_master_authentication_failures_total",
                        "Connections to the master's RPC port refused or cut in the authentication handshake, by "
                                + "reason (each also logged WARN with the peer's address, rate-limited).")
                .labelNames("reason")
                .register(registry);
        for (AuthFailure r : AuthFailure.values()) authFailures.labels(r.label());
        admittedUnchecked = Counter.build(
                        "estuary_master_unauthenticated_admitted_total",
                        "Connections that proved no identity and were admitted unchecked by the permissive mode "
                                + "(estuary.auth.mode=permissive, for a rolling upgrade).")
                .register(registry);
        registrationsThrottled = Counter.build(
                        "estuary_master_registrations_throttled_total",
                        "Application registrations refused (RETRY_LATER) because their host registered faster than "
                                + "estuary.master.registration.ratePerHost.")
                .register(registry);
        QuotaAdmin quotaViews = new QuotaAdmin(master, () -> null, () -> null);
        quotas = new QuotaMetrics(registry, quotaViews::entries);
        new Collector() {
            @Override
            public List<MetricFamilySamples> collect() {
                List<MetricFamilySamples> out = new ArrayList<>();
                out.add(new GaugeMetricFamily(
                        "estuary_master_is_leader", "1 when this master leads.", master.isLeader() ? 1 : 0));
                out.add(new GaugeMetricFamily(
                        "estuary_master_term",
                        "Raft term (0 for a single master).",
                        master.log().term()));
                out.add(new io.prometheus.client.CounterMetricFamily(
                        "estuary_master_raft_authentication_failures_total",
                        "Connections to this master's Raft port refused: no or a wrong proof of the cluster secret.",
                        master.log().raftAuthenticationFailures()));
                out.add(new io.prometheus.client.CounterMetricFamily(
                        "estuary_master_raft_unauthenticated_admitted_total",
                        "Connections to this master's Raft port admitted without a proof of the cluster secret "
                                + "(estuary.auth.mode=permissive, for a rolling upgrade).",
                        master.log().raftUnauthenticatedAdmitted()));
                out.add(new GaugeMetricFamily(
                        "estuary_master_applied_index",
                        "Index of the last applied change.",
                        master.log().appliedIndex()));
                GaugeMetricFamily workers = new GaugeMetricFamily(
                        "estuary_master_workers",
                        "Registered workers by state: available (not excluded or decommissioning, with a healthy disk; includes workers shutting down), no_healthy_disk, excluded, "
                                + "decommissioning.",
                        Arrays.asList("state"));
                int[] counts = master.state(s -> {
                    int[] c = new int[4];
                    for (io.estuary.common.protocol.WorkerInfo w : s.workers()) {
                        io.estuary.common.protocol.WorkerState ws =
                                s.workerState(io.estuary.master.state.WorkerId.of(w.getAddress()));
                        if (ws == io.estuary.common.protocol.WorkerState.WORKER_EXCLUDED) {
                            c[2]++;
                            continue;
                        }
                        if (ws == io.estuary.common.protocol.WorkerState.WORKER_DECOMMISSIONING) {
                            c[3]++;
                            continue;
                        }
                        boolean ok = false;
                        for (io.estuary.common.protocol.DiskInfo d : w.getDisksList()) {
                            ok |= d.getStatus() == io.estuary.common.protocol.DiskStatus.DISK_HEALTHY;
                        }
                        c[ok ? 0 : 1]++;
                    }
                    return c;
                });
                workers.addMetric(Arrays.asList("available"), counts[0]);
                workers.addMetric(Arrays.asList("no_healthy_disk"), counts[1]);
                workers.addMetric(Arrays.asList("excluded"), counts[2]);
                workers.addMetric(Arrays.asList("decommissioning"), counts[3]);
                out.add(workers);
                int apps = master.state(s -> s.applicationIds().size());
                out.add(new GaugeMetricFamily("estuary_master_applications", "Registered applications.", apps));
                out.add(applicationsByPrincipal(master));
                return out;
            }
        }.register(registry);
    }

    /** Distinct (user, tenant) series at most; the rest are counted under user and tenant {@code _other}. */
    static final int MAX_PRINCIPAL_SERIES = 200;

    /**
     * Registered applications per bound principal, the ones without one (yet) under user {@code _none}; always a
     * series with user {@code _all} (every application), so a dashboard finds one on an idle cluster.
     */
    private static GaugeMetricFamily applicationsByPrincipal(AdministeredMaster master) {
        java.util.Map<List<String>, Integer> counts = new java.util.TreeMap<>(
                java.util.Comparator.comparing((List<String> l) -> l.get(0)).thenComparing(l -> l.get(1)));
        for (String app : master.state(s -> s.applicationIds())) {
            io.estuary.common.protocol.ApplicationPrincipal p = master.principalOf(app);
            List<String> key = p == null
                    ? Arrays.asList("_none", "")
                    : Arrays.asList(labelOf(p.getUser()), labelOf(p.getTenant()));
            if (!counts.containsKey(key) && counts.size() >= MAX_PRINCIPAL_SERIES) {
                key = Arrays.asList("_other", "_other");
            }
            counts.merge(key, 1, Integer::sum);
        }
        GaugeMetricFamily g = new GaugeMetricFamily(
                "estuary_master_applications_by_principal",
                "Registered applications by who runs them (user and tenant bound at registration; user _none: none "
                        + "bound yet; _all: every application; a name of a user or tenant that starts with _ gets "
                        + "one more _ in front).",
                Arrays.asList("user", "tenant"));
        int all = 0;
        for (java.util.Map.Entry<List<String>, Integer> e : counts.entrySet()) {
            g.addMetric(e.getKey(), e.getValue());
            all += e.getValue();
        }
        g.addMetric(Arrays.asList("_all", "_all"), all);
        return g;
    }

    /** A user or tenant as a label value: names starting with _ are escaped so none reads as _all, _none, _other. */
    private static String labelOf(String name) {
        return name.startsWith("_") ? "_" + name : name;
    }

    /** Records one answered slot request. */
    public void slotRequest(long nanos, boolean failed) {
        slotRequests.inc();
        if (failed) slotRequestFailures.inc();
        slotRequestSeconds.observe(nanos / 1e9);
    }

    public void slotLease() {
        slotLeases.inc();
    }

    public void placementRecorded() {
        placementsRecorded.inc();
    }

    public long slotRequests() {
        return (long) slotRequests.get();
    }

    public long slotLeases() {
        return (long) slotLeases.get();
    }

    public long placementsRecorded() {
        return (long) placementsRecorded.get();
    }

    /** Records one revive request (however many partitions it names). */
    public void reviveSlotRequest() {
        reviveSlotRequests.inc();
    }

    public long reviveSlotRequests() {
        return (long) reviveSlotRequests.get();
    }

    public void workerFailureReport() {
        workerFailureReports.inc();
    }

    public long workerFailureReports() {
        return (long) workerFailureReports.get();
    }

    /** Records one request refused by authorization (see {@code io.estuary.network.auth.Authorizer}). */
    public void authorizationRefused(String request, io.estuary.common.status.StatusCode status) {
        authorizationRefusals.labels(request, status.name()).inc();
    }

    /**
     * Counts a new shuffle not admitted under the quota of {@code scope} ("cluster", "tenant", "user") {@code name},
     * at its {@code limit}; {@code waiting}: told to wait (ADMISSION_WAIT), else refused (QUOTA_EXCEEDED).
     */
    public void quotaRefused(String scope, String name, String limit, boolean waiting) {
        quotas.refused(scope, name, limit, waiting);
    }

    public long quotaRefusals(String scope, String name, String limit, boolean waiting) {
        return quotas.refusals(scope, name, limit, waiting);
    }

    public void registrationThrottled() {
        registrationsThrottled.inc();
    }

    public long authorizationRefusals(String request, io.estuary.common.status.StatusCode status) {
        return (long) authorizationRefusals.labels(request, status.name()).get();
    }

    /** What the master's RPC server reports to (give it to its {@code TransportServer.Options}). */
    public TransportObserver observer() {
        return new TransportObserver() {
            @Override
            public void authenticationFailed(AuthFailure reason) {
                authFailures.labels(reason.label()).inc();
            }

            @Override
            public void admittedUnauthenticated() {
                admittedUnchecked.inc();
            }
        };
    }

    /** Authentication failures counted for {@code reason}. */
    public long authenticationFailures(AuthFailure reason) {
        return (long) authFailures.labels(reason.label()).get();
    }

    /** This master's metrics, for the admin endpoint and the metrics doc. */
    public CollectorRegistry registry() {
        return registry;
    }
}
