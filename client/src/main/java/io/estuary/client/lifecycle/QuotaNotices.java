package io.estuary.client.lifecycle;

import io.estuary.common.protocol.ApplicationHeartbeatResponse;
import io.estuary.common.protocol.StoppedShuffle;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the master says of the application's quotas in its heartbeat answers: warnings while the user, tenant or
 * cluster holds more bytes than its quota (logged when they change), and shuffles it stopped under a quota's
 * {@code overBytes=stop}. A stopped shuffle stays stopped for the engine: its registrations (any later generation
 * too), revives and reads fail with {@link StatusCode#QUOTA_EXCEEDED} and the master's reason, so the job fails with
 * it instead of running the shuffle again. Thread-safe.
 */
final class QuotaNotices {
    private static final Logger LOG = LoggerFactory.getLogger(QuotaNotices.class);

    private final String appId;
    private final ShuffleGenerations generations;
    /** Engine shuffle ids stopped by the master, with its reason. */
    private final Map<Integer, String> stopped = new ConcurrentHashMap<>();

    private volatile List<String> warnings = Collections.emptyList();

    QuotaNotices(String appId, ShuffleGenerations generations) {
        this.appId = appId;
        this.generations = generations;
    }

    /** One heartbeat's answer. */
    void accept(ApplicationHeartbeatResponse r) {
        List<String> now = r.getQuotaWarningsList();
        if (!now.equals(warnings)) {
            for (String w : now) LOG.warn("Application {}: {}", appId, w);
            if (now.isEmpty()) LOG.info("Application {} is within its quotas again", appId);
            warnings = Collections.unmodifiableList(new ArrayList<>(now));
        }
        for (StoppedShuffle s : r.getStoppedShufflesList()) {
            ShuffleState st = generations.byId(s.getShuffleId());
            if (st == null) continue; // gone already
            if (stopped.putIfAbsent(st.engineShuffleId, s.getReason()) == null) {
                LOG.error("{} of {} was stopped by the master: {}", st, appId, s.getReason());
            }
        }
    }

    /** The warnings of the newest answer. */
    List<String> warnings() {
        return warnings;
    }

    /** Throws {@link StatusCode#QUOTA_EXCEEDED} with the master's reason when the engine shuffle was stopped. */
    void checkRunning(int engineShuffleId) {
        String why = stopped.get(engineShuffleId);
        if (why != null) {
            throw new StatusException(
                    StatusCode.QUOTA_EXCEEDED, "shuffle " + engineShuffleId + " of " + appId + " was stopped: " + why);
        }
    }
}
