package io.estuary.mr;

import io.estuary.common.time.Clock;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.mapred.JobID;
import org.apache.hadoop.mapred.MapTaskCompletionEventsUpdate;
import org.apache.hadoop.mapred.ShuffleConsumerPlugin;
import org.apache.hadoop.mapred.TaskAttemptID;
import org.apache.hadoop.mapred.TaskCompletionEvent;
import org.apache.hadoop.mapred.TaskStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gets the maps of a reducer's job run again after their Estuary output was lost, with MapReduce's own mechanism:
 * the reduce attempt reports a fetch failure for each map attempt the ApplicationMaster counts as succeeded
 * (carried by the attempt's status updates), and the ApplicationMaster fails those attempts and reruns the maps
 * ({@link EstuaryAppMaster} makes one report enough). Every map is reported, not just those that wrote the lost
 * partition: the lost generation is dropped as a whole, and the reruns write a fresh one.
 *
 * <p>What the ApplicationMaster counts as succeeded is read from its map completion events, as MapReduce's own
 * shuffle reads them. The wait for the ApplicationMaster to act is timed on the given {@link Clock}. Used by the
 * reduce task's thread.
 */
final class MapReruns {
    private static final Logger LOG = LoggerFactory.getLogger(MapReruns.class);
    private static final long POLL_MS = 1000;
    /** How long the ApplicationMaster may take to act on the reports before the reduce attempt gives up waiting. */
    private static final long ACK_WAIT_MS = 120_000;

    private final ShuffleConsumerPlugin.Context<?, ?> context;
    private final int numMaps;
    private final Set<TaskAttemptID> reported = new HashSet<>();
    private final Clock clock;
    /** When the last reports were made, on {@link Clock#nanos()}. */
    private long reportedAt;

    MapReruns(ShuffleConsumerPlugin.Context<?, ?> context, int numMaps, Clock clock) {
        this.context = context;
        this.numMaps = numMaps;
        this.clock = clock;
    }

    /** Reports a fetch failure for every map attempt that currently counts; returns how many were new. */
    int request() throws IOException {
        TaskStatus status = context.getStatus();
        int fresh = 0;
        for (TaskAttemptID a : succeeded()) {
            if (a == null || !reported.add(a)) continue;
            // The reporter thread clears the list under the status's lock after each update it sends.
            synchronized (status) {
                status.addFetchFailedMap(a);
            }
            fresh++;
        }
        reportedAt = clock.nanos();
        context.getReporter().progress(); // the next status update carries the reports
        LOG.info("Reported {} map attempts whose Estuary output is lost ({} so far)", fresh, reported.size());
        return fresh;
    }

    /**
     * Waits (bounded) until the ApplicationMaster no longer counts any reported attempt as succeeded, i.e. it acted
     * on the reports; a reduce attempt that then fails leaves the maps rerunning.
     */
    void awaitAcknowledged() throws IOException, InterruptedException {
        while (reportedStillCount(succeeded())) {
            if (ackWaitOver()) {
                LOG.warn("The ApplicationMaster did not act on the fetch failures within {} ms", ACK_WAIT_MS);
                return;
            }
            pause();
        }
    }

    /**
     * Waits until every map has succeeded again by an attempt not reported, as MapReduce's own shuffle waits for
     * rerun maps (reporting progress meanwhile). Fails when the ApplicationMaster ignores the reports or a map
     * fails for good.
     */
    void awaitAllRerun() throws IOException, InterruptedException {
        while (true) {
            TaskAttemptID[] current = succeeded();
            boolean stale = reportedStillCount(current);
            if (stale && ackWaitOver()) {
                throw new IOException(
                        "the ApplicationMaster did not rerun the maps whose Estuary output is lost within "
                                + ACK_WAIT_MS + " ms (is it started by " + EstuaryAppMaster.class.getName() + "?)");
            }
            boolean all = !stale;
            for (TaskAttemptID a : current) all &= a != null;
            if (all) return;
            pause();
        }
    }

    private boolean ackWaitOver() {
        return clock.nanos() - reportedAt > TimeUnit.MILLISECONDS.toNanos(ACK_WAIT_MS);
    }

    private boolean reportedStillCount(TaskAttemptID[] current) {
        for (TaskAttemptID a : current) if (a != null && reported.contains(a)) return true;
        return false;
    }

    private void pause() throws InterruptedException {
        context.getReporter().progress();
        Thread.sleep(POLL_MS);
    }

    /**
     * For each map, the attempt the ApplicationMaster counts as succeeded now, or null while it has none. Read from
     * all its map completion events: an attempt that succeeded and later failed (a fetch-failure rerun) shows up as
     * obsolete in place and again as failed.
     */
    private TaskAttemptID[] succeeded() throws IOException {
        TaskAttemptID[] current = new TaskAttemptID[numMaps];
        TaskAttemptID reduce = TaskAttemptID.downgrade(context.getReduceId());
        JobID job = reduce.getJobID();
        int from = 0;
        while (true) {
            MapTaskCompletionEventsUpdate update =
                    context.getUmbilical().getMapCompletionEvents(job, from, 10_000, reduce);
            TaskCompletionEvent[] events = update.getMapTaskCompletionEvents();
            for (TaskCompletionEvent e : events) {
                TaskAttemptID a = e.getTaskAttemptId();
                int m = a.getTaskID().getId();
                if (m < 0 || m >= numMaps) continue;
                switch (e.getTaskStatus()) {
                    case SUCCEEDED:
                        current[m] = a;
                        break;
                    case TIPFAILED:
                        throw new IOException(
                                "map " + m + " of " + job + " failed for good; its output cannot be rerun");
                    default: // FAILED, KILLED, OBSOLETE
                        if (a.equals(current[m])) current[m] = null;
                }
            }
            if (events.length == 0) return current;
            from += events.length;
        }
    }
}
