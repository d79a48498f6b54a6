package io.estuary.worker.push;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.util.ShuffleKey;
import io.estuary.worker.storage.MemoryTracker;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides which applications push too fast and must slow down: measures push rates per application and per user
 * over a sliding window and, every {@link #evaluate} (on a timer), marks as congested
 * <ul>
 *   <li>an application above {@code estuary.worker.congestion.appMaxRate}, or a user above {@code userMaxRate};
 *   <li>while memory is above its resume watermark, an application or user pushing more than
 *       {@code fairShareFactor} times the average of the others pushing.
 * </ul>
 * A congested application's pushes are still taken (the data has arrived) but acknowledged with
 * {@code CONGESTED}, and its client holds back; at the next evaluation that finds it within bounds it is resumed.
 *
 * <p>Thread-safe: {@link #recordPush} and {@link #congested} run on Netty threads (lock-free); {@link #evaluate} on
 * one timer thread publishes a new immutable set.
 */
public final class CongestionControl {
    private static final Logger LOG = LoggerFactory.getLogger(CongestionControl.class);
    private static final String UNKNOWN_USER = "";
    static final long EVALUATE_MS = 500;

    private final boolean enabled;
    private final int windowSeconds;
    private final long appMaxRate;
    private final long userMaxRate;
    private final double fairShare;
    private final MemoryTracker memory;
    private final Map<String, PushRateWindow> apps = new ConcurrentHashMap<>();
    private final Map<String, PushRateWindow> users = new ConcurrentHashMap<>();
    /** Who runs each application; forgotten once it has neither reserved nor pushed for {@link #forgetUserMs}. */
    private final Map<String, AppUser> userOfApp = new ConcurrentHashMap<>();
    /** {@code estuary.worker.congestion.forgetIdleApplicationAfter}. */
    private final long forgetUserMs;

    private volatile Set<String> congestedApps = Collections.emptySet();
    /**
     * The rate (bytes per second) each congested application may push now: the cap it passed, its share of its user's
     * cap, or its fair share. Published with {@link #congestedApps}; empty while enforcement is off.
     */
    private volatile Map<String, Long> allowedRates = Collections.emptyMap();
    /** Per enforced application: when (clock nanos) its pushes so far have been paid for at its allowed rate. */
    private final Map<String, java.util.concurrent.atomic.AtomicLong> paidUntil = new ConcurrentHashMap<>();

    private final boolean enforce;
    private final long maxHoldNanos;
    private final java.util.concurrent.ScheduledExecutorService timer;

    private final io.estuary.common.time.Clock clock;

    public CongestionControl(EstuaryConf conf, MemoryTracker memory) {
        this(conf, memory, io.estuary.common.time.Clock.system());
    }

    /** {@code clock}: the monotonic time the rate windows and idle applications are measured in. */
    public CongestionControl(EstuaryConf conf, MemoryTracker memory, io.estuary.common.time.Clock clock) {
        this.clock = clock;
        this.enabled = conf.get(WorkerConfig.CONGESTION_ENABLED);
        this.windowSeconds = (int) (conf.get(WorkerConfig.CONGESTION_WINDOW) / 1000);
        this.appMaxRate = conf.get(WorkerConfig.CONGESTION_APP_MAX_RATE);
        this.userMaxRate = conf.get(WorkerConfig.CONGESTION_USER_MAX_RATE);
        this.fairShare = conf.get(WorkerConfig.CONGESTION_FAIR_SHARE);
        this.forgetUserMs = conf.get(WorkerConfig.CONGESTION_FORGET_IDLE_APPLICATION);
        this.enforce = conf.get(WorkerConfig.CONGESTION_ENFORCE);
        this.maxHoldNanos =
                java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(conf.get(WorkerConfig.CONGESTION_MAX_HOLD));
        this.memory = memory;
        this.timer = enabled ? new io.estuary.common.util.GuardedScheduledExecutor("worker-congestion") : null;
        if (timer != null) {
            timer.scheduleWithFixedDelay(
                    () -> {
                        try {
                            evaluate();
                        } catch (RuntimeException e) {
                            LOG.warn("Evaluating push rates failed", e);
                        }
                    },
                    EVALUATE_MS,
                    EVALUATE_MS,
                    java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    public void close() {
        if (timer != null) timer.shutdownNow();
    }

    private static final class AppUser {
        final String user;
        volatile long lastActiveMs;

        AppUser(String user, long nowMs) {
            this.user = user;
            this.lastActiveMs = nowMs;
        }
    }

    /** Remembers who runs an application (from its slot reservations). */
    public void applicationUser(String appId, String user) {
        applicationUser(appId, user, false, nowMs());
    }

    /** The application's user as the master bound it (a sealed principal): replaces any claim taken before. */
    public void boundUser(String appId, String user) {
        applicationUser(appId, user, true, nowMs());
    }

    /**
     * The user whose rates an application's pushes count in. A driver's claim ({@code bound} false) is taken only when
     * none is known, so a later reservation cannot move the application to another user's budget; the master's word
     * replaces it.
     */
    void applicationUser(String appId, String user, boolean bound, long nowMs) {
        if (!enabled || user.isEmpty()) return;
        userOfApp.compute(appId, (app, known) -> {
            if (known == null || (bound && !known.user.equals(user))) return new AppUser(user, nowMs);
            known.lastActiveMs = Math.max(known.lastActiveMs, nowMs); // a reservation counts as activity
            return known;
        });
    }

    public void recordPush(String shuffleKey, long bytes) {
        recordPush(shuffleKey, bytes, nowMs());
    }

    void recordPush(String shuffleKey, long bytes, long now) {
        if (!enabled) return;
        String app = ShuffleKey.appId(shuffleKey);
        apps.computeIfAbsent(app, a -> new PushRateWindow(windowSeconds)).record(bytes, now);
        AppUser u = userOfApp.get(app);
        if (u != null) u.lastActiveMs = now;
        users.computeIfAbsent(u == null ? UNKNOWN_USER : u.user, x -> new PushRateWindow(windowSeconds))
                .record(bytes, now);
    }

    /**
     * Each application's push rate into this worker now, in bytes per second over the window (for the masters'
     * quotas); empty while congestion control is off, which measures nothing.
     */
    public Map<String, Long> pushRates() {
        long now = nowMs();
        Map<String, Long> out = new HashMap<>();
        for (Map.Entry<String, PushRateWindow> e : apps.entrySet()) {
            long r = e.getValue().rate(now);
            if (r > 0) out.put(e.getKey(), r);
        }
        return out;
    }

    /** Whose rates an application's pushes count in, or null when unknown (for the status page and tests). */
    public String userOf(String appId) {
        return userOf(appId, null);
    }

    private String userOf(String app, String unknown) {
        AppUser u = userOfApp.get(app);
        return u == null ? unknown : u.user;
    }

    /** Applications this worker keeps anything about (rates or user), for tests of its bounds. */
    int applicationsTracked() {
        java.util.Set<String> all = new HashSet<>(apps.keySet());
        all.addAll(userOfApp.keySet());
        return all.size();
    }

    /** Whether pushes of the shuffle's application should be told to slow down. */
    public boolean congested(String shuffleKey) {
        Set<String> c = congestedApps;
        return !c.isEmpty() && c.contains(ShuffleKey.appId(shuffleKey));
    }

    /** Recomputes the congested applications from the rates now; forgets applications idle for a whole window. */
    public void evaluate() {
        evaluate(nowMs());
    }

    /** Monotonic milliseconds: windows measure durations, so a stepped wall clock does not skew them. */
    private long nowMs() {
        return java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(clock.nanos());
    }

    void evaluate(long now) {
        if (!enabled) return;
        userOfApp.values().removeIf(u -> now - u.lastActiveMs > forgetUserMs);
        Map<String, Long> appRates = rates(apps, now);
        Map<String, Long> userRates = rates(users, now);
        boolean loaded = memory.held() >= memory.watermarks().resume();
        Map<String, Long> hotUsers = over(userRates, userMaxRate, loaded);
        Map<String, Long> allowed = over(appRates, appMaxRate, loaded);
        for (Map.Entry<String, Long> a : appRates.entrySet()) {
            String user = userOf(a.getKey(), UNKNOWN_USER);
            Long userAllowed = hotUsers.get(user);
            if (userAllowed == null) continue;
            // Its part of what the user may push, in proportion to what it pushes of the user's total.
            long share = Math.max(1, (long) ((double) userAllowed * a.getValue() / Math.max(1, userRates.get(user))));
            allowed.merge(a.getKey(), share, Math::min);
        }
        Set<String> next = new HashSet<>(allowed.keySet());
        for (String app : next) {
            if (!congestedApps.contains(app)) {
                LOG.info(
                        "Application {} (user {}) pushes {} bytes/s: told to slow down",
                        app,
                        userOf(app, "unknown"),
                        appRates.get(app));
            }
        }
        for (String app : congestedApps) {
            if (!next.contains(app)) LOG.info("Application {} may push at full speed again", app);
        }
        // The rates first: a push told CONGESTED is held from then on.
        allowedRates = !enforce || allowed.isEmpty() ? Collections.<String, Long>emptyMap() : allowed;
        paidUntil.keySet().retainAll(allowed.keySet());
        congestedApps = next.isEmpty() ? Collections.<String>emptySet() : Collections.unmodifiableSet(next);
    }

    /**
     * How long (nanoseconds) the connection that just brought {@code bytes} of the shuffle's application should go
     * unread so that the application's pushes fit the rate it is allowed now: 0 when it is not congested (or
     * enforcement is off). The application's connections share one schedule, so holding each until its own push is
     * paid for keeps their sum to the allowed rate; each hold is at most {@code maxHold}, the debt at most a window.
     */
    public long holdNanos(String shuffleKey, long bytes) {
        Map<String, Long> rates = allowedRates;
        if (rates.isEmpty()) return 0;
        String app = ShuffleKey.appId(shuffleKey);
        Long rate = rates.get(app);
        if (rate == null) return 0;
        long now = clock.nanos();
        long cost = (long) (bytes * 1e9 / rate);
        java.util.concurrent.atomic.AtomicLong paid =
                paidUntil.computeIfAbsent(app, a -> new java.util.concurrent.atomic.AtomicLong(now));
        // The debt is kept (up to a window's worth), each hold capped: frames read before a hold took effect are paid
        // for by the holds that follow, so the application's rate stays its allowed one over time.
        long debtCap = Math.max(maxHoldNanos, java.util.concurrent.TimeUnit.SECONDS.toNanos(windowSeconds));
        long until = paid.accumulateAndGet(cost, (was, c) -> Math.min(Math.max(was, now) + c, now + debtCap));
        return Math.min(maxHoldNanos, Math.max(0, until - now));
    }

    private static Map<String, Long> rates(Map<String, PushRateWindow> windows, long now) {
        Map<String, Long> out = new HashMap<>();
        windows.entrySet().removeIf(e -> {
            long r = e.getValue().rate(now);
            if (r == 0) return true;
            out.put(e.getKey(), r);
            return false;
        });
        return out;
    }

    /** The keys over their cap or (under memory load) their fair share, each with the rate it is allowed. */
    private Map<String, Long> over(Map<String, Long> rates, long maxRate, boolean loaded) {
        Map<String, Long> out = new HashMap<>();
        long total = 0;
        for (long r : rates.values()) total += r;
        boolean share = loaded && rates.size() >= 2;
        for (Map.Entry<String, Long> e : rates.entrySet()) {
            long r = e.getValue();
            // Compared with the others' average: with two, one can never pass a multiple of an average it is part of.
            double othersAverage = (double) (total - r) / (rates.size() - 1);
            long allowed = Long.MAX_VALUE;
            if (maxRate > 0 && r > maxRate) allowed = maxRate;
            if (share && r > fairShare * othersAverage) {
                // Never below an equal split of what all push now: next to a nearly idle one, a share of its
                // trickle would hold every push for the longest hold.
                long equal = total / rates.size();
                allowed = Math.min(allowed, Math.max(equal, (long) (fairShare * othersAverage)));
            }
            if (allowed != Long.MAX_VALUE) out.put(e.getKey(), Math.max(1, allowed));
        }
        return out;
    }

    /** Applications told to slow down now. */
    public Set<String> congestedApplications() {
        return congestedApps;
    }
}
