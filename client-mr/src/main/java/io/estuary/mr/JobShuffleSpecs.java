package io.estuary.mr;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.MRJobConfig;

/**
 * The one Estuary shuffle of a MapReduce job, as its tasks see it: in local mode a shuffle of the JVM's
 * {@link LocalLifecycles} lifecycle; on YARN shuffle 0 of the lifecycle the ApplicationMaster launcher
 * ({@link EstuaryAppMaster}) started and announced in the job configuration.
 *
 * <p>Stateless: static functions only, safe from any thread.
 */
final class JobShuffleSpecs {
    private JobShuffleSpecs() {}

    static ShuffleSpec of(JobConf job, JobID jobId) {
        int maps = job.getInt(MRJobConfig.NUM_MAPS, -1);
        int reduces = job.getNumReduceTasks();
        if (maps < 0) throw new IllegalStateException(MRJobConfig.NUM_MAPS + " is not set in the job configuration");
        String address = MrJobKeys.lifecycleAddress(job);
        if (address == null) {
            if (!MrJobKeys.isLocal(job)) {
                throw new IllegalStateException("Estuary's lifecycle manager is not running for " + jobId + ": on YARN "
                        + "the ApplicationMaster must be started by " + EstuaryAppMaster.class.getName() + " (set "
                        + "yarn.app.mapreduce.am.command-opts to \"-Xmx<heap> " + EstuaryAppMaster.class.getName()
                        + "\"). "
                        + "Estuary never falls back to MapReduce's own shuffle.");
            }
            LifecycleManager lm = LocalLifecycles.get(job);
            return new ShuffleSpec(
                    lm.appId(), LocalLifecycles.shuffleId(jobId.toString()), maps, reduces, lm.host(), lm.port());
        }
        int colon = address.lastIndexOf(':');
        String appId = MrJobKeys.appId(job, jobId.toString());
        return new ShuffleSpec(
                appId, 0, maps, reduces, address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
    }
}
