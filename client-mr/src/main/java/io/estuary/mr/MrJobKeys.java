package io.estuary.mr;

/**
 * Job configuration keys Estuary sets for itself (never by users), outside the {@code estuary.*} namespace so the
 * client configuration never sees them. On YARN the ApplicationMaster launcher writes them into its own job
 * configuration and hands them to the tasks as environment variables; in local mode they are absent and the job
 * client's JVM hosts the lifecycle.
 *
 * <p>Constants and static functions only, safe from any thread.
 */
final class MrJobKeys {
    /** {@code host:port} of the job's lifecycle manager. */
    static final String LIFECYCLE_ADDRESS = "mapreduce.job.estuary.lifecycle.address";
    /** The Estuary application id of the job (the ApplicationMaster attempt plus the lifecycle manager's suffix). */
    static final String APP_ID = "mapreduce.job.estuary.app.id";

    /** Task environment variables carrying the two values above on YARN (see {@link EstuaryAppMaster}). */
    static final String ENV_LIFECYCLE_ADDRESS = "ESTUARY_MR_LIFECYCLE_ADDRESS";

    static final String ENV_APP_ID = "ESTUARY_MR_APP_ID";

    static final String FRAMEWORK_NAME = "mapreduce.framework.name";

    private MrJobKeys() {}

    /** The lifecycle's {@code host:port} from the job configuration or the task's environment; null if neither. */
    static String lifecycleAddress(org.apache.hadoop.conf.Configuration job) {
        String a = job.get(LIFECYCLE_ADDRESS);
        return a != null ? a : System.getenv(ENV_LIFECYCLE_ADDRESS);
    }

    /** The Estuary application id announced with the address, or {@code fallback}. */
    static String appId(org.apache.hadoop.conf.Configuration job, String fallback) {
        String id = job.get(APP_ID);
        if (id == null) id = System.getenv(ENV_APP_ID);
        return id != null ? id : fallback;
    }

    static boolean isLocal(org.apache.hadoop.conf.Configuration job) {
        return "local".equals(job.get(FRAMEWORK_NAME, "local"));
    }
}
