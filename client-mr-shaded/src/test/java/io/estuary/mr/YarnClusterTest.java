package io.estuary.mr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.testing.ClusterSecrets;
import io.estuary.testing.ClusterTls;
import io.estuary.testing.Waits;
import io.estuary.worker.MiniCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringTokenizer;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.map.TokenCounterMapper;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Jobs on a real YARN cluster (MiniMRYarnCluster: a resource manager and a node manager in this JVM, the
 * ApplicationMaster and every task in JVMs of their own), with the Estuary lifecycle manager inside the
 * ApplicationMaster ({@link EstuaryAppMaster}) and a real master and workers on loopback. Outputs are compared with
 * the same jobs on MapReduce's own shuffle under LocalJobRunner. One cluster serves all tests: it takes most of a
 * minute to start.
 *
 * <p>The ApplicationMaster and the tasks run on what users deploy: their class path is Hadoop's and the test classes
 * with the shaded jar as the only Estuary client ({@link ShadedClassPath}), not the test JVM's, which holds the
 * unshaded modules for the servers in it. Runs after the package phase, when the shaded jar exists.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class YarnClusterTest {
    private static final String OPENS = "--add-opens=java.base/java.lang=ALL-UNNAMED";
    private MiniCluster estuary;
    private MiniMRYarnCluster yarn;
    private java.nio.file.Path tmp;
    private Configuration local;

    @BeforeAll
    void start() throws Exception {
        estuary = new MiniCluster(2, 1, new EstuaryConf());
        tmp = Files.createTempDirectory("estuary-mr-yarn");
        Configuration conf = new YarnConfiguration();
        conf.setInt("yarn.nodemanager.resource.memory-mb", 4096);
        conf.setBoolean("yarn.nodemanager.vmem-check-enabled", false);
        conf.setBoolean("yarn.nodemanager.pmem-check-enabled", false);
        conf.setInt("yarn.scheduler.minimum-allocation-mb", 256);
        yarn = new MiniMRYarnCluster("estuary-mr", 1);
        yarn.init(conf);
        yarn.start();
        local = new Configuration();
        local.set("fs.defaultFS", "file:///");
        local.set("mapreduce.framework.name", "local");
        local.set("mapreduce.cluster.local.dir", tmp.resolve("local").toString());
        local.set(
                "mapreduce.jobtracker.staging.root.dir", tmp.resolve("staging").toString());
        local.setInt("mapreduce.local.map.tasks.maximum", 2);
    }

    @AfterAll
    void stop() throws Exception {
        if (yarn != null) yarn.stop();
        if (estuary != null) estuary.close();
    }

    private Configuration onYarn() {
        Configuration c = new Configuration(yarn.getConfig());
        TestJobs.withEstuary(c, estuary.masterEndpoint());
        c.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m " + OPENS + " " + EstuaryAppMaster.class.getName());
        c.setInt("yarn.app.mapreduce.am.resource.mb", 512);
        c.setInt("mapreduce.map.memory.mb", 512);
        c.setInt("mapreduce.reduce.memory.mb", 512);
        c.set("mapreduce.map.java.opts", "-Xmx384m " + OPENS);
        c.set("mapreduce.reduce.java.opts", "-Xmx384m " + OPENS);
        c.setInt("mapreduce.task.io.sort.mb", 8);
        c.setLong("mapreduce.input.fileinputformat.split.maxsize", 2L << 20);
        c.setBoolean("mapreduce.map.speculative", false);
        c.setBoolean("mapreduce.reduce.speculative", false);
        // On a mini cluster MapReduce hands the containers this JVM's class path; this one instead.
        c.setBoolean(YarnConfiguration.IS_MINI_YARN_CLUSTER, false);
        c.set(MRJobConfig.MAPREDUCE_APPLICATION_CLASSPATH, String.join(",", ShadedClassPath.entries()));
        return c;
    }

    /**
     * The class path every container of {@code job} was launched with (its launch scripts under the node manager's
     * folders) holds the shaded jar and no unshaded Estuary module.
     */
    private void assertContainersRanTheShadedJar(Job job) throws IOException {
        String app = job.getJobID().toString().replace("job_", "application_");
        List<java.nio.file.Path> scripts;
        try (java.util.stream.Stream<java.nio.file.Path> files =
                Files.walk(yarn.getTestWorkDir().toPath())) {
            scripts = files.filter(f -> f.getFileName().toString().equals("launch_container.sh")
                            && f.toString().contains(app))
                    .collect(Collectors.toList());
        }
        assertFalse(scripts.isEmpty(), "no container launch script of " + app + " under " + yarn.getTestWorkDir());
        String shaded = ShadedClassPath.shadedJar().getAbsolutePath();
        for (java.nio.file.Path script : scripts) {
            String classPath = Files.readAllLines(script).stream()
                    .filter(l -> l.startsWith("export CLASSPATH="))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(script + " sets no CLASSPATH"));
            assertTrue(classPath.contains(shaded), script + " lacks the shaded jar: " + classPath);
            for (String entry :
                    classPath.substring("export CLASSPATH=\"".length()).split("[:\"]")) {
                assertFalse(ShadedClassPath.unshadedEstuary(entry), script + " holds an unshaded module: " + entry);
            }
        }
    }

    private Path path(String name) {
        return new Path(tmp.resolve(name).toUri());
    }

    @Test
    void totalOrderSort() throws Exception {
        Path in = path("sort");
        TestInputs.sortRecords(local, new Path(in, "part0"), 6L << 20, 7);
        JobOutput expected = TestJobs.totalOrderSort(new Configuration(local), in, path("sort-native"), 3);
        JobOutput actual = TestJobs.totalOrderSort(onYarn(), in, path("sort-yarn"), 3);
        assertTrue(actual.globallySorted);
        assertEquals(expected, actual);
    }

    /**
     * A reducer's partition is lost (one copy, its worker dies after every map ended and before any reducer reads):
     * the reducers report the maps, the ApplicationMaster reruns them into a fresh generation, and the job still
     * writes what native MapReduce writes. A cluster of its own, so the other tests keep their workers.
     */
    @Test
    void lostPartitionRerunsTheMaps() throws Exception {
        Path in = path("words-lost");
        TestInputs.words(local, new Path(in, "words.txt"), 4L << 20);
        JobOutput expected = TestJobs.wordCount(new Configuration(local), in, path("lost-native"), 2);
        try (MiniCluster lossy = new MiniCluster(2, 1, new EstuaryConf())) {
            Configuration c = onYarn();
            TestJobs.withEstuary(c, lossy.masterEndpoint());
            c.setBoolean("estuary.client.push.replicate", false);
            c.set("mapreduce.job.reduce.shuffle.consumer.plugin.class", GatedShuffleConsumer.class.getName());
            java.nio.file.Path gate = tmp.resolve("lost-gate");
            c.set(GatedShuffleConsumer.GATE, gate.toString());
            Job job = TestJobs.wordCountJob(c, 2, TokenCounterMapper.class);
            TestJobs.setPaths(job, in, path("lost-yarn"));
            job.submit();
            java.nio.file.Path arrived = tmp.resolve("lost-gate.arrived");
            Waits.waitFor( // a reducer runs: every map has ended
                    () -> {
                        if (Files.exists(arrived)) return true;
                        try {
                            assertFalse(job.isComplete(), "the job ended and no reducer reached the gate");
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                        return false;
                    },
                    180_000,
                    "a reducer reaches the gate");
            int victim = workerWithData(lossy);
            lossy.workers().get(victim).close();
            Files.createFile(gate);
            JobOutput actual = TestJobs.finish(job);
            assertEquals(expected, actual);
            int maps = job.getTaskReports(TaskType.MAP).length;
            long launched = job.getCounters()
                    .findCounter(JobCounter.TOTAL_LAUNCHED_MAPS)
                    .getValue();
            assertTrue(launched >= 2L * maps, launched + " map attempts for " + maps + " maps: the maps did not rerun");
        }
    }

    /**
     * With authentication on (a cluster of its own that enforces it), the ApplicationMaster makes the job's secret and
     * its tasks prove it from the job's credentials: a task without it could not push or fetch, so the job's native
     * output proves they had it. No job configuration written for the job (the staging directory, the history
     * server's copy of the AM's configuration) names the secret. The same cluster serves TLS on its cluster-internal
     * and data ports, and the ApplicationMaster on its own port, with replicas on: the servers' ports accept only TLS,
     * so the job's success proves the AM and every task spoke TLS (their trust files named in the job's
     * configuration); each server port is also checked to present the cluster's certificate.
     */
    @Test
    void authenticatedJobGetsItsSecretFromTheCredentialsNotTheConfiguration() throws Exception {
        Path in = path("words-auth");
        TestInputs.words(local, new Path(in, "words.txt"), 2L << 20);
        JobOutput expected = TestJobs.wordCount(new Configuration(local), in, path("auth-native"), 2);
        java.nio.file.Path secretFile = ClusterSecrets.newFile(tmp);
        ClusterTls tls = ClusterTls.create(tmp.resolve("tls"));
        try (MiniCluster secured =
                new MiniCluster(2, 1, tls.enableOnServers(ClusterSecrets.enable(new EstuaryConf(), secretFile)))) {
            Configuration c = onYarn();
            TestJobs.withEstuary(c, secured.masterEndpoint());
            c.setBoolean(AuthConfig.ENABLED.key(), true);
            c.setBoolean("estuary.client.push.replicate", true);
            for (Map.Entry<String, String> kv : tls.jobSettings("").entrySet()) c.set(kv.getKey(), kv.getValue());
            Job job = TestJobs.wordCountJob(c, 2, TokenCounterMapper.class);
            TestJobs.setPaths(job, in, path("auth-yarn"));
            assertEquals(expected, TestJobs.finish(job));
            List<Integer> ports = new java.util.ArrayList<>();
            ports.add(secured.master().port());
            for (io.estuary.worker.Worker w : secured.workers()) {
                ports.add(w.address().getRpcPort());
                ports.add(w.address().getPushPort());
                ports.add(w.address().getFetchPort());
            }
            for (int port : ports) {
                assertEquals(
                        ClusterTls.SUBJECT,
                        tls.peerCertificate(port).getSubjectX500Principal().getName(),
                        "port " + port);
            }

            String jobId = job.getJobID().toString();
            java.nio.file.Path staging =
                    java.nio.file.Paths.get(yarn.getConfig().get(MRJobConfig.MR_AM_STAGING_DIR));
            List<java.nio.file.Path> confs;
            try (java.util.stream.Stream<java.nio.file.Path> files = Files.walk(staging)) {
                confs = files.filter(f ->
                                f.toString().endsWith(".xml") && f.toString().contains(jobId))
                        .collect(Collectors.toList());
            }
            assertFalse(confs.isEmpty(), "no configuration of " + jobId + " under " + staging);
            for (java.nio.file.Path f : confs) {
                String xml = new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.UTF_8);
                assertTrue(xml.contains("estuary.auth.enabled"), f + " is not the job's configuration");
                assertFalse(xml.contains("application.secret"), f + " names the application secret");
            }
        }
    }

    /**
     * Two attempts of a map push their whole output, as a speculative attempt and the original do: map 0's first
     * attempt pushes everything and ends in Estuary, then fails, and its second attempt pushes everything again. The
     * first attempt to end is the one reducers read, so nothing is doubled. In the same job reduce 0's first attempt
     * fails halfway through reading its partition, after a merge wrote records to local disk; its second attempt
     * reads the partition again from the start. And map 1's first attempt dies halfway through its input, after it
     * pushed part of its output ({@link FailingOnceMapper}); its second attempt pushes everything. The output is still
     * the native one.
     */
    @Test
    void duplicatedMapAttemptAndReduceFailingAfterPartialMerge() throws Exception {
        Path in = path("words-dup");
        TestInputs.words(local, new Path(in, "words.txt"), 6L << 20);
        JobOutput expected = TestJobs.wordCount(new Configuration(local), in, path("dup-native"), 2);
        java.nio.file.Path markers = Files.createDirectories(tmp.resolve("dup-markers"));
        Configuration c = onYarn();
        c.set("mapreduce.job.map.output.collector.class", MarkingCollector.class.getName());
        c.set(MarkingCollector.MARKERS, markers.toString());
        c.setBoolean(MarkingCollector.FAIL_AFTER_END, true);
        c.set("mapreduce.job.reduce.shuffle.consumer.plugin.class", FailingAfterMergeConsumer.class.getName());
        c.setInt("mapreduce.task.io.sort.mb", 1); // many small runs per reducer
        c.setLong("mapreduce.reduce.memory.totalbytes", 512L << 10); // merges to disk while reading
        c.setInt("mapreduce.task.merge.progress.records", 1000); // a merge reports progress, and so fails, early
        Job job = TestJobs.wordCountJob(c, 2, FailingOnceMapper.class);
        TestJobs.setPaths(job, in, path("dup-yarn"));
        assertEquals(expected, TestJobs.finish(job));
        assertEquals(
                2, job.getCounters().findCounter(JobCounter.NUM_FAILED_MAPS).getValue(), "failed map attempts");
        assertEquals(
                1,
                job.getCounters().findCounter(JobCounter.NUM_FAILED_REDUCES).getValue(),
                "failed reduce attempts (did a merge spill before the reducer read everything?)");
        List<String> map0 =
                markerNames(markers).stream().filter(m -> m.contains("-m0-")).collect(Collectors.toList());
        assertEquals(2, map0.size(), "attempts of map 0 that ended in Estuary: " + map0);
        assertContainersRanTheShadedJar(job);
    }

    /**
     * The ApplicationMaster's first attempt dies (halts) once a map has ended in Estuary; YARN starts a second one,
     * which starts a lifecycle of its own (a fresh Estuary application) and runs every map again, as recovery is
     * off: what the first attempt's maps pushed is never read, and the output is the native one.
     */
    @Test
    void applicationMasterRetryRerunsEveryMap() throws Exception {
        Path in = path("words-am");
        TestInputs.words(local, new Path(in, "words.txt"), 6L << 20);
        JobOutput expected = TestJobs.wordCount(new Configuration(local), in, path("am-native"), 2);
        java.nio.file.Path markers = Files.createDirectories(tmp.resolve("am-markers"));
        Configuration c = onYarn();
        c.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m " + OPENS + " " + CrashingAppMaster.class.getName());
        c.setInt("mapreduce.am.max-attempts", 2);
        c.set("mapreduce.job.map.output.collector.class", MarkingCollector.class.getName());
        c.set(MarkingCollector.MARKERS, markers.toString());
        Job job = TestJobs.wordCountJob(c, 2, TokenCounterMapper.class);
        TestJobs.setPaths(job, in, path("am-yarn"));
        assertEquals(expected, TestJobs.finish(job));
        Map<String, Set<String>> mapsByApp = new TreeMap<>();
        for (String m : markerNames(markers)) {
            int cut = m.lastIndexOf("-m");
            mapsByApp
                    .computeIfAbsent(m.substring(0, cut), k -> new TreeSet<>())
                    .add(m.substring(cut + 2, m.lastIndexOf("-a")));
        }
        assertEquals(2, mapsByApp.size(), "Estuary applications (AM attempts) whose maps ended: " + mapsByApp);
        int maps = job.getTaskReports(TaskType.MAP).length;
        Set<String> second = mapsByApp.get(Collections.max(mapsByApp.keySet()));
        assertEquals(maps, second.size(), "maps ended under the second AM attempt: " + second);
        assertContainersRanTheShadedJar(job);
    }

    private static List<String> markerNames(java.nio.file.Path dir) throws IOException {
        try (java.util.stream.Stream<java.nio.file.Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString())
                    .filter(n -> !n.endsWith(".tmp"))
                    .collect(Collectors.toList());
        }
    }

    /** A worker holding shuffle data (without replication each partition lives on one worker). */
    private static int workerWithData(MiniCluster cluster) throws IOException {
        for (int i = 0; i < cluster.workers().size(); i++) {
            try (java.util.stream.Stream<java.nio.file.Path> files =
                    Files.walk(cluster.root().resolve("worker" + i + "-disk0"))) {
                if (files.anyMatch(f -> f.toString().endsWith(".data"))) return i;
            }
        }
        throw new IllegalStateException("no worker holds shuffle data");
    }

    /**
     * Word count's mapper, except that the first attempt of map 1 fails after 20,000 lines (with a 1 MB sort buffer it
     * has pushed part of its output by then).
     */
    public static final class FailingOnceMapper extends Mapper<Object, Text, Text, IntWritable> {
        private static final IntWritable ONE = new IntWritable(1);
        private final Text word = new Text();
        private int lines;

        @Override
        protected void map(Object key, Text value, Context context) throws IOException, InterruptedException {
            if (++lines == 20_000
                    && context.getTaskAttemptID().getTaskID().getId() == 1
                    && context.getTaskAttemptID().getId() == 0) {
                throw new IOException("the first attempt of map 1 fails on purpose");
            }
            StringTokenizer words = new StringTokenizer(value.toString());
            while (words.hasMoreTokens()) {
                word.set(words.nextToken());
                context.write(word, ONE);
            }
        }
    }
}
