package io.estuary.master.quota;

import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.master.protocol.Quota;
import io.estuary.master.state.MasterState;
import java.util.List;
import java.util.function.Function;

/**
 * Whether a new shuffle may be placed under the quotas of its application's user, tenant and the cluster
 * ({@link QuotaBook#applicable}). Over one, the shuffle is refused ({@link StatusCode#QUOTA_EXCEEDED}) or, when that
 * quota's policy is to wait, told to wait ({@link StatusCode#ADMISSION_WAIT}) until its driver has waited the quota's
 * {@code max_wait_ms}; either message names the quota, its limit and what is in use. Never a silent fall-back. A
 * shuffle already placed (a retry, a repair) is not admitted again. Thread-safe: the admissions under way ({@code
 * pending}) are guarded by this object's lock; everything else it reads.
 */
public final class Admission {
    private final QuotaBook book;
    private final QuotaUsage usage;

    public Admission(QuotaBook book, QuotaUsage usage) {
        this.book = book;
        this.usage = usage;
        this.enforcer = new QuotaEnforcer(book, usage);
    }

    private final QuotaEnforcer enforcer;

    /** Running applications against the same quotas. */
    public QuotaEnforcer enforcer() {
        return enforcer;
    }

    /** Whether a failure is this class's answer: refused (QUOTA_EXCEEDED) or told to wait (ADMISSION_WAIT). */
    public static boolean isQuotaAnswer(Throwable e) {
        io.estuary.common.status.StatusCode c = io.estuary.common.status.HasStatus.statusOf(e);
        return c == StatusCode.QUOTA_EXCEEDED || c == StatusCode.ADMISSION_WAIT;
    }

    /** The quotas and the usage they are measured against. */
    public QuotaBook book() {
        return book;
    }

    public QuotaUsage usage() {
        return usage;
    }

    /** Why a shuffle is not admitted: the quota over which, and the status to answer. */
    public static final class Refusal {
        public final Quota quota;
        /** Which limit: "bytes", "files", "shuffles", "slots" or "pushRate" (a metric label). */
        public final String limit;

        public final StatusException status;

        Refusal(Quota quota, String limit, StatusException status) {
            this.quota = quota;
            this.limit = limit;
            this.status = status;
        }
    }

    /**
     * Shuffles admitted whose placement is not logged yet, by "app/shuffle", with their location copies: counted as
     * used, so that shuffles admitted at once cannot together pass a limit each alone kept.
     */
    private final java.util.Map<String, Long> pending = new java.util.HashMap<>();

    /**
     * Admits shuffle {@code shuffleId} of {@code app} (null), counting it as used until {@link #placed}, or says why
     * not. {@code newSlots}: the location copies it needs; {@code waitedMs}: how long its driver says it has waited;
     * {@code canWait}: whether its driver asks again after ADMISSION_WAIT (one before 0.2.0 is refused instead).
     */
    public synchronized Refusal admit(
            MasterState s,
            String app,
            int shuffleId,
            long newSlots,
            long waitedMs,
            boolean canWait,
            Function<String, ApplicationPrincipal> principalOf) {
        // Admissions of applications gone meanwhile are forgotten (their placement never comes).
        pending.keySet().removeIf(k -> !s.hasApplication(k.substring(0, k.lastIndexOf('/'))));
        Refusal no = check(s, app, shuffleId, newSlots, waitedMs, canWait, principalOf);
        if (no == null && !book.applicable(s, principalOf.apply(app)).isEmpty()) {
            pending.put(app + "/" + shuffleId, newSlots);
        }
        return no;
    }

    /** The admitted shuffle's placement is logged (or failed): it counts through the state from now on. */
    public synchronized void placed(String app, int shuffleId) {
        pending.remove(app + "/" + shuffleId);
    }

    /** This master gained or lost leadership: admissions under way are another leader's now. */
    public synchronized void clear() {
        pending.clear();
        enforcer.clear();
    }

    /**
     * Null when shuffle {@code shuffleId} of {@code app}, needing {@code newSlots} location copies, may be placed;
     * otherwise why not. {@code waitedMs}: how long its driver says it has waited for admission already.
     */
    private Refusal check(
            MasterState s,
            String app,
            int shuffleId,
            long newSlots,
            long waitedMs,
            boolean canWait,
            Function<String, ApplicationPrincipal> principalOf) {
        List<Quota> quotas = book.applicable(s, principalOf.apply(app));
        if (quotas.isEmpty()) return null;
        java.util.Map<String, QuotaBook.Member> census = QuotaBook.census(s, usage.byApplication(s), principalOf);
        for (Quota q : quotas) {
            QuotaBook.Use use = QuotaBook.useOf(q, census);
            for (java.util.Map.Entry<String, Long> p : pending.entrySet()) {
                String pendingApp = p.getKey().substring(0, p.getKey().lastIndexOf('/'));
                int pendingShuffle =
                        Integer.parseInt(p.getKey().substring(p.getKey().lastIndexOf('/') + 1));
                if (s.isShufflePlaced(pendingApp, pendingShuffle)) continue; // counted through the state already
                QuotaBook.Member member = census.get(pendingApp);
                if (member == null || !QuotaBook.inScope(q, member.principal)) continue;
                use.shuffles++;
                use.slots += p.getValue();
            }
            String over = null;
            String why = null;
            if (q.getMaxShuffles() > 0 && use.shuffles + 1 > q.getMaxShuffles()) {
                over = "shuffles";
                why = "at its quota of " + q.getMaxShuffles() + " active shuffles (" + use.shuffles + " in use)";
            } else if (q.getMaxSlots() > 0 && use.slots + newSlots > q.getMaxSlots()) {
                over = "slots";
                why = "at its quota of " + q.getMaxSlots() + " slots: " + use.slots + " in use, and this shuffle needs "
                        + newSlots + " more";
            } else if (q.getMaxBytes() > 0 && use.bytes >= q.getMaxBytes()) {
                over = "bytes";
                why = "over its quota of " + bytes(q.getMaxBytes()) + " held on workers (" + bytes(use.bytes)
                        + " in use)";
            } else if (q.getMaxFiles() > 0 && use.files >= q.getMaxFiles()) {
                over = "files";
                why = "over its quota of " + q.getMaxFiles() + " partition files (" + use.files + " in use)";
            } else if (q.getMaxPushBytesPerSecond() > 0 && use.pushBytesPerSecond >= q.getMaxPushBytesPerSecond()) {
                over = "pushRate";
                why = "over its quota of pushing " + bytes(q.getMaxPushBytesPerSecond()) + "/s ("
                        + bytes(use.pushBytesPerSecond) + "/s now)";
            }
            if (over == null) continue;
            String head = "shuffle " + shuffleId + " of " + app + ": " + QuotaSpec.scopeName(q.getScope(), q.getName())
                    + " is " + why;
            if (q.getWait() && !canWait) {
                return new Refusal(
                        q,
                        over,
                        new StatusException(
                                StatusCode.QUOTA_EXCEEDED,
                                head
                                        + "; its quota lets a shuffle wait for room, but this client cannot wait (a release "
                                        + "before 0.2.0): upgrade it"));
            }
            if (q.getWait() && waitedMs < q.getMaxWaitMs()) {
                return new Refusal(
                        q,
                        over,
                        new StatusException(
                                StatusCode.ADMISSION_WAIT,
                                head + "; waiting for room (" + seconds(waitedMs) + " of " + seconds(q.getMaxWaitMs())
                                        + ")"));
            }
            return new Refusal(
                    q,
                    over,
                    new StatusException(
                            StatusCode.QUOTA_EXCEEDED,
                            head + (q.getWait() ? "; no room after waiting " + seconds(waitedMs) : "")
                                    + " (see `estuary quota`)"));
        }
        return null;
    }

    private static String seconds(long ms) {
        return (ms / 1000) + " s";
    }

    /** A byte count the way people read it: 1.5 GiB, 200 MiB, 512 B. */
    public static String bytes(long b) {
        if (b < 1024) return b + " B";
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = b;
        int i = -1;
        while (v >= 1024 && i < units.length - 1) {
            v /= 1024;
            i++;
        }
        return (v >= 100
                        ? String.format(java.util.Locale.ROOT, "%.0f", v)
                        : String.format(java.util.Locale.ROOT, "%.1f", v))
                + " " + units[i];
    }
}
