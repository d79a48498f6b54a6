package io.estuary.mr;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.app.MRAppMaster;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MapReduce ApplicationMaster with Estuary's lifecycle manager inside. Selected by configuration alone:
 * {@code yarn.app.mapreduce.am.command-opts = -Xmx<heap> io.estuary.mr.EstuaryAppMaster} (the AM command is
 * {@code java <command-opts> MRAppMaster}, so this class becomes the main class and MRAppMaster its argument; the
 * heap must be given there, as whatever YARN appends after this class name is ignored).
 *
 * <p>Before handing over to {@link MRAppMaster}, it starts the lifecycle manager (its application id is the AM
 * attempt, so an AM retry starts a fresh Estuary application) and writes its address into the AM's own job
 * configuration, which gives it to every task container it launches as environment variables
 * ({@code mapreduce.map.env}, {@code mapreduce.reduce.env}; read by {@link MrJobKeys}). The submitted job.xml in the
 * staging directory is never rewritten: YARN localizes the files of a retried AM attempt only while their
 * modification times are those recorded at submission, and the node manager caches a task's job.xml per path and
 * time, so a rewritten job.xml would stop a second AM attempt from starting (or hand tasks a stale address).
 * Recovery of finished tasks across AM attempts is turned off, because their output belongs to the previous
 * attempt's application: a retried AM reruns every task into its own fresh Estuary application, and what the
 * first attempt's maps pushed is never read, so no record is lost or doubled. Reducers start once
 * every map has ended (a reducer's first request waits for the shuffle's commit, which needs every map; started
 * earlier it would only hold a container). Map-only jobs start nothing.
 *
 * <p>With authentication on, the job's application secret is made here and added to this process's credentials,
 * which MRAppMaster hands to every task container it launches ({@link JobSecret}); it is never written to job.xml.
 *
 * <p>When a reducer finds data lost it reports fetch failures for the maps ({@link MapReruns}); this launcher sets
 * the ApplicationMaster to rerun a map on the first report ({@code mapreduce.reduce.shuffle.max-fetch-failures-*}),
 * and the lifecycle to give the rerun maps a fresh generation
 * ({@link LifecycleManager#rerunsReplaceLostGenerations()}).
 */
public final class EstuaryAppMaster {
    private static final Logger LOG = LoggerFactory.getLogger(EstuaryAppMaster.class);
    private static final String RECOVERY_ENABLE = "yarn.app.mapreduce.am.job.recovery.enable";
    private static final String REDUCE_SLOWSTART = "mapreduce.job.reduce.slowstart.completedmaps";
    private static final String FETCH_FAILURE_NOTIFICATIONS =
            "mapreduce.reduce.shuffle.max-fetch-failures-notifications";
    private static final String FETCH_FAILURE_FRACTION = "mapreduce.reduce.shuffle.max-fetch-failures-fraction";

    private EstuaryAppMaster() {}

    public static void main(String[] args) throws Exception {
        String container = System.getenv(ApplicationConstants.Environment.CONTAINER_ID.name());
        JobConf conf = new JobConf(new YarnConfiguration());
        conf.addResource(new Path(MRJobConfig.JOB_CONF_FILE));
        if (container != null && conf.getNumReduceTasks() > 0) {
            String appId =
                    ContainerId.fromString(container).getApplicationAttemptId().toString();
            String host = System.getenv(ApplicationConstants.Environment.NM_HOST.name());
            if (host == null) host = InetAddress.getLocalHost().getCanonicalHostName();
            EstuaryConf estuary = MrConfBridge.toEstuaryConf(conf);
            if (estuary.get(AuthConfig.ENABLED)) {
                // Before MRAppMaster copies this user's credentials into those of every task container it launches.
                byte[] secret = JobSecret.generate();
                JobSecret.addToCurrentUser(secret);
                JobSecret.setIn(estuary, secret);
            }
            LifecycleManager lifecycle = new LifecycleManager(appId, estuary, host);
            lifecycle.rerunsReplaceLostGenerations();
            Runtime.getRuntime().addShutdownHook(new Thread(lifecycle::close, "estuary-lifecycle-stop"));
            String address = host + ":" + lifecycle.port();
            announce(lifecycle.appId(), address);
            LOG.info("Estuary lifecycle manager of {} at {}", lifecycle.appId(), address);
        }
        MRAppMaster.main(new String[0]);
    }

    /**
     * Writes the lifecycle's address into the AM's job.xml (a fresh file in place of the node manager's link, never
     * written through) and into the environment of the tasks it launches.
     */
    private static void announce(String appId, String address) throws IOException {
        java.nio.file.Path local = Paths.get(MRJobConfig.JOB_CONF_FILE);
        Configuration mine = new Configuration(false);
        try (InputStream in = Files.newInputStream(local)) {
            mine.addResource(in);
            mine.size(); // parse now, while the stream is open
        }
        set(mine, appId, address);
        addTaskEnv(mine, MRJobConfig.MAP_ENV, appId, address);
        addTaskEnv(mine, MRJobConfig.REDUCE_ENV, appId, address);
        java.nio.file.Path fresh = Paths.get(MRJobConfig.JOB_CONF_FILE + ".estuary");
        try (OutputStream out = Files.newOutputStream(fresh)) {
            mine.writeXml(out);
        }
        Files.move(fresh, local, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    /** Appends the lifecycle's address to a task type's environment list (which replaces {@code mapred.child.env}). */
    private static void addTaskEnv(Configuration c, String key, String appId, String address) {
        String given = c.get(key, c.get(JobConf.MAPRED_TASK_ENV, ""));
        String ours = MrJobKeys.ENV_LIFECYCLE_ADDRESS + "=" + address + "," + MrJobKeys.ENV_APP_ID + "=" + appId;
        c.set(key, given.trim().isEmpty() ? ours : given + "," + ours);
    }

    private static void set(Configuration c, String appId, String address) {
        c.set(MrJobKeys.LIFECYCLE_ADDRESS, address);
        c.set(MrJobKeys.APP_ID, appId);
        c.setBoolean(RECOVERY_ENABLE, false);
        c.setFloat(REDUCE_SLOWSTART, 1.0f);
        // A reducer reports a map only when Estuary lost data of its generation (never for a slow or flaky host, as
        // MapReduce's own shuffle does), so one report from one reducer is enough to rerun it.
        c.setInt(FETCH_FAILURE_NOTIFICATIONS, 1);
        c.setFloat(FETCH_FAILURE_FRACTION, 0f);
    }
}
