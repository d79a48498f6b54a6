package io.estuary.tests;

import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.ExternalClusterManager;
import org.apache.spark.scheduler.SchedulerBackend;
import org.apache.spark.scheduler.TaskScheduler;
import org.apache.spark.scheduler.TaskSchedulerImpl;
import org.apache.spark.scheduler.local.LocalSchedulerBackend;
import scala.Option;

/**
 * Local mode with a given application id and attempt id, as YARN's cluster-mode scheduler backend reports them:
 * master {@code attempt-local[<cores>]:<applicationId>:<attemptId>}. Two drivers started one after the other with
 * the same id and attempts 1 and 2 are what YARN does when it retries a driver ({@code spark.yarn.maxAppAttempts}).
 * Found by Spark through {@code META-INF/services}; only for master URLs of that form.
 */
public final class AttemptClusterManager implements ExternalClusterManager {
    static final String PREFIX = "attempt-local[";

    /** The master URL of attempt {@code attempt} of application {@code appId}. */
    static String master(int cores, String appId, int attempt) {
        return PREFIX + cores + "]:" + appId + ":" + attempt;
    }

    @Override
    public boolean canCreate(String masterURL) {
        return masterURL.startsWith(PREFIX);
    }

    @Override
    public TaskScheduler createTaskScheduler(SparkContext sc, String masterURL) {
        return new TaskSchedulerImpl(sc);
    }

    @Override
    public SchedulerBackend createSchedulerBackend(SparkContext sc, String masterURL, TaskScheduler scheduler) {
        String[] parts = masterURL.split(":");
        int cores = Integer.parseInt(parts[0].substring(PREFIX.length(), parts[0].length() - 1));
        return new AttemptBackend(sc, (TaskSchedulerImpl) scheduler, cores, parts[1], parts[2]);
    }

    @Override
    public void initialize(TaskScheduler scheduler, SchedulerBackend backend) {
        ((TaskSchedulerImpl) scheduler).initialize(backend);
    }

    /** Spark's local backend reporting the given ids. */
    static final class AttemptBackend extends LocalSchedulerBackend {
        private final String appId;
        private final String attemptId;

        AttemptBackend(SparkContext sc, TaskSchedulerImpl scheduler, int cores, String appId, String attemptId) {
            super(sc.getConf(), scheduler, cores);
            this.appId = appId;
            this.attemptId = attemptId;
        }

        @Override
        public String applicationId() {
            return appId;
        }

        @Override
        public Option<String> applicationAttemptId() {
            return Option.apply(attemptId);
        }
    }
}
