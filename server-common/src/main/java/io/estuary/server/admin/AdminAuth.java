package io.estuary.server.admin;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.time.Clock;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may call which route of an {@link AdminHttpServer}. With {@code estuary.auth.enabled=true} every change (any
 * method but GET and HEAD) needs the {@link AdminToken} as {@code Authorization: Bearer <token>}; reads need it
 * unless {@code estuary.auth.admin.protectReads=false}; {@code GET /metrics} and {@code GET /health} stay open
 * unless {@code estuary.auth.admin.openMetrics=false}. With authentication off every call is let in, as before.
 *
 * <p>A refusal is counted ({@value #REFUSALS}, by reason) and logged WARN with the peer's address, at most one line
 * per {@link #WARN_INTERVAL_MS} (the next line says how many were not logged). Neither ever holds a token, presented or
 * expected. Thread-safe.
 */
public final class AdminAuth {
    private static final Logger LOG = LoggerFactory.getLogger(AdminAuth.class);

    /** The counter of refused calls, in every server's registry (auth on or off, so the metrics doc is one). */
    public static final String REFUSALS = "estuary_admin_http_refusals_total";

    /** At most one WARN per this long; the others are counted, and the next WARN says how many. */
    static final long WARN_INTERVAL_MS = 10_000;

    private static final String BEARER = "Bearer ";

    /** Why a call was refused (the {@code reason} label of {@value #REFUSALS}). */
    public enum Refusal {
        /** No {@code Authorization: Bearer} header. */
        MISSING("missing"),
        /** A token that is not this server's. */
        WRONG("wrong");

        final String label;

        Refusal(String label) {
            this.label = label;
        }
    }

    private final AdminToken token; // null: authentication off
    private final boolean protectReads;
    private final boolean openMetrics;
    private final Clock clock;
    private final Counter refusals = Counter.build(
                    REFUSALS,
                    "Admin HTTP calls refused for a missing or wrong admin token (estuary.auth.admin.*), by reason.")
            .labelNames("reason")
            .create();
    private final Object warnLock = new Object();
    private long lastWarnNanos;
    private boolean warnedOnce;
    private long unlogged;
    private long logged;

    private AdminAuth(AdminToken token, boolean protectReads, boolean openMetrics, Clock clock) {
        this.token = token;
        this.protectReads = protectReads;
        this.openMetrics = openMetrics;
        this.clock = clock;
        for (Refusal r : Refusal.values()) refusals.labels(r.label); // children up front: scrapes and docs show them
    }

    /** Everything let in (authentication off). */
    public static AdminAuth off() {
        return new AdminAuth(null, false, true, Clock.system());
    }

    /** With {@code token} required as {@code protectReads} and {@code openMetrics} say. */
    public static AdminAuth requiring(AdminToken token, boolean protectReads, boolean openMetrics, Clock clock) {
        if (token == null) throw new IllegalArgumentException("no token");
        return new AdminAuth(token, protectReads, openMetrics, clock);
    }

    /**
     * What {@code conf} asks for: off unless {@code estuary.auth.enabled}; then its token, which must be given (a
     * token file, or a cluster secret to derive it from), else {@link ConfigException} saying how to give one.
     */
    public static AdminAuth fromConf(EstuaryConf conf, Clock clock) {
        if (!conf.get(AuthConfig.ENABLED)) return off();
        AdminToken token = AdminToken.fromConf(conf);
        if (token == null) {
            throw new ConfigException(AuthConfig.ENABLED.key() + "=true: the admin HTTP API needs a token; set "
                    + AuthConfig.ADMIN_TOKEN_FILE.key() + ", or " + AuthConfig.CLUSTER_SECRET_FILE.key()
                    + " to derive it from (bin/estuary secret generate > FILE)");
        }
        return requiring(
                token, conf.get(AuthConfig.ADMIN_PROTECT_READS), conf.get(AuthConfig.ADMIN_OPEN_METRICS), clock);
    }

    /** Whether a token is required for anything. */
    public boolean enabled() {
        return token != null;
    }

    /** Whether {@code method path} needs the token. */
    public boolean protects(String method, String path) {
        if (token == null) return false;
        boolean read = method.equals("GET") || method.equals("HEAD");
        if (!read) return true;
        if (path.equals("/metrics") || path.equals("/health")) return !openMetrics;
        return protectReads;
    }

    /**
     * Null when {@code method path} may go on with this {@code authorization} header (null when absent); else why
     * not, counted and logged (rate-limited) with {@code peer}.
     */
    public Refusal check(String method, String path, String authorization, String peer) {
        if (!protects(method, path)) return null;
        Refusal r;
        if (authorization == null || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            r = Refusal.MISSING;
        } else if (token.matches(authorization.substring(BEARER.length()).trim())) {
            return null;
        } else {
            r = Refusal.WRONG;
        }
        refusals.labels(r.label).inc();
        warn(method, path, r, peer);
        return r;
    }

    /** The 401's message: what is missing and how to give it, never the token. */
    public static String message(String method, String path, Refusal r) {
        String how = "send 'Authorization: Bearer <token>' with the token of " + AuthConfig.ADMIN_TOKEN_FILE.key()
                + " (or, when that is unset, the one derived from the cluster secret; bin/estuary does this)";
        return r == Refusal.MISSING
                ? method + " " + path + " needs an admin token: " + how
                : method + " " + path + ": the admin token sent is not this server's; " + how;
    }

    /** How many calls were refused for {@code r}. */
    public double refused(Refusal r) {
        return refusals.labels(r.label).get();
    }

    /** How many WARN lines refusals have logged (tests check the rate limit). */
    long warningsLogged() {
        synchronized (warnLock) {
            return logged;
        }
    }

    /** Adds the refusal counter to {@code registry}. */
    public void register(CollectorRegistry registry) {
        registry.register(refusals);
    }

    private void warn(String method, String path, Refusal r, String peer) {
        long suppressed;
        synchronized (warnLock) {
            long now = clock.nanos();
            if (warnedOnce && now - lastWarnNanos < TimeUnit.MILLISECONDS.toNanos(WARN_INTERVAL_MS)) {
                unlogged++;
                return;
            }
            warnedOnce = true;
            lastWarnNanos = now;
            suppressed = unlogged;
            unlogged = 0;
            logged++;
        }
        LOG.warn(
                "Refused admin call {} {} from {}: {} admin token{}",
                method,
                path,
                peer,
                r == Refusal.MISSING ? "no" : "a wrong",
                suppressed == 0 ? "" : " (and " + suppressed + " more refusals not logged)");
    }

    @Override
    public String toString() {
        return token == null
                ? "AdminAuth(off)"
                : "AdminAuth(token " + token.source() + ", protectReads=" + protectReads + ", openMetrics="
                        + openMetrics + ")";
    }
}
