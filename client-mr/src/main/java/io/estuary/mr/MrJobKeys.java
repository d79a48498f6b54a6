package io.estuary.mr;

/**
 * Job configuration keys Estuary sets for itself (never by users), outside the {@code estuary.*} namespace so the
 * client configuration never sees them. On YARN the ApplicationMaster launcher writes them into the job
 * configuration the tasks read; in local mode they are absent and the job client's JVM hosts the lifecycle.
 *
 * <p>Constants and static functions only, safe from any thread.
 */
final class MrJobKeys {
  /** {@code host:port} of the job's lifecycle manager. */
  static final String LIFECYCLE_ADDRESS = "mapreduce.job.estuary.lifecycle.address";
  /** The Estuary application id of the job (the ApplicationMaster attempt, so an AM retry starts afresh). */
  static final String APP_ID = "mapreduce.job.estuary.app.id";

  static final String FRAMEWORK_NAME = "mapreduce.framework.name";

  private MrJobKeys() {}

  static boolean isLocal(org.apache.hadoop.conf.Configuration job) {
    return "local".equals(job.get(FRAMEWORK_NAME, "local"));
  }
}
