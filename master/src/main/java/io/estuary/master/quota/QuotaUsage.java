package io.estuary.master.quota;

import io.estuary.common.protocol.ApplicationPushRate;
import io.estuary.common.protocol.ShuffleUsage;
import io.estuary.common.util.ShuffleKey;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What applications hold on workers and how fast they push, as each worker reported it in its newest heartbeat to
 * this leader ({@code WorkerHeartbeatRequest.usage}, {@code push_rates}). Soft state, like the workers' load: not
 * logged; a new leader knows it again after one heartbeat interval. A worker declared lost is forgotten with what it
 * held. Thread-safe: heartbeats replace a worker's report whole; readers sum the reports.
 */
public final class QuotaUsage {
    /** One worker's newest report. Immutable. */
    private static final class Report {
        final Map<String, ShuffleUsage> shuffles = new HashMap<>();
        final Map<String, Long> rates = new HashMap<>();
    }

    private final Map<String, Report> byWorker = new ConcurrentHashMap<>();

    /** Replaces what {@code workerId} reported before. */
    public void report(String workerId, List<ShuffleUsage> usage, List<ApplicationPushRate> rates) {
        Report r = new Report();
        for (ShuffleUsage u : usage) r.shuffles.put(u.getShuffleKey(), u);
        for (ApplicationPushRate p : rates) r.rates.merge(p.getAppId(), Math.max(0, p.getBytesPerSecond()), Long::sum);
        byWorker.put(workerId, r);
    }

    public void forget(String workerId) {
        byWorker.remove(workerId);
    }

    /** This master gained or lost leadership: it learns usage afresh. */
    public void clear() {
        byWorker.clear();
    }

    /** What one application holds on all workers and its push rate into all of them. */
    public static final class ApplicationUse {
        public long bytes;
        public long files;
        public long pushBytesPerSecond;
    }

    /**
     * Every application any worker reported, with what it holds over all workers of the shuffles {@code s} knows placed:
     * a shuffle unregistered (by its driver, or stopped over a quota) no longer counts while workers delete it.
     */
    public Map<String, ApplicationUse> byApplication(io.estuary.master.state.MasterState s) {
        Map<String, ApplicationUse> out = new HashMap<>();
        for (Report r : byWorker.values()) {
            for (ShuffleUsage u : r.shuffles.values()) {
                String key = u.getShuffleKey();
                if (!s.isShufflePlaced(ShuffleKey.appId(key), ShuffleKey.shuffleId(key))) continue;
                ApplicationUse a = out.computeIfAbsent(ShuffleKey.appId(u.getShuffleKey()), k -> new ApplicationUse());
                a.bytes += Math.max(0, u.getBytes());
                a.files += Math.max(0, u.getFiles());
            }
            for (Map.Entry<String, Long> e : r.rates.entrySet()) {
                out.computeIfAbsent(e.getKey(), k -> new ApplicationUse()).pushBytesPerSecond += e.getValue();
            }
        }
        return out;
    }

    /** Bytes each shuffle of {@code appId} holds over all workers, by shuffle id. */
    public Map<Integer, Long> shuffleBytes(String appId) {
        Map<Integer, Long> out = new HashMap<>();
        for (Report r : byWorker.values()) {
            for (ShuffleUsage u : r.shuffles.values()) {
                if (ShuffleKey.appId(u.getShuffleKey()).equals(appId)) {
                    out.merge(ShuffleKey.shuffleId(u.getShuffleKey()), Math.max(0, u.getBytes()), Long::sum);
                }
            }
        }
        return out;
    }
}
