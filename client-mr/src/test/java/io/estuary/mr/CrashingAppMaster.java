package io.estuary.mr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.records.ContainerId;

/**
 * {@link EstuaryAppMaster}, except that its first attempt dies (halts, as a killed process would: no shutdown hook
 * runs) as soon as a map attempt has ended in Estuary, seen by the marker files of {@link MarkingCollector} in the
 * directory the job key {@value MarkingCollector#MARKERS} names. YARN then starts a second attempt.
 */
public final class CrashingAppMaster {
    private CrashingAppMaster() {}

    public static void main(String[] args) throws Exception {
        Configuration job = new Configuration(false);
        job.addResource(new org.apache.hadoop.fs.Path(MRJobConfig.JOB_CONF_FILE));
        String dir = job.get(MarkingCollector.MARKERS);
        String container = System.getenv(ApplicationConstants.Environment.CONTAINER_ID.name());
        if (dir != null
                && ContainerId.fromString(container).getApplicationAttemptId().getAttemptId() == 1) {
            Thread crash = new Thread(
                    () -> {
                        try {
                            while (!anyMarker(Paths.get(dir))) Thread.sleep(20);
                            System.err.println(
                                    "CrashingAppMaster: a map ended in Estuary; halting the first AM attempt");
                            Runtime.getRuntime().halt(1);
                        } catch (InterruptedException | IOException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "crash-after-first-map");
            crash.setDaemon(true);
            crash.start();
        }
        EstuaryAppMaster.main(args);
    }

    private static boolean anyMarker(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.anyMatch(f -> !f.getFileName().toString().endsWith(".tmp"));
        }
    }
}
