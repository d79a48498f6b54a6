package io.estuary.mr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MapTask;
import org.apache.hadoop.mapred.TaskAttemptID;
import org.apache.hadoop.mapred.TaskStatus;

/**
 * Estuary's map output collector, except that a map attempt that ended in Estuary (its output pushed and its end
 * reported to the lifecycle) leaves a marker file {@code <dir>/<estuary app id>-m<map>-a<attempt>} when the job key
 * {@value #MARKERS} names a directory, and that the first attempt of map 0 then fails when {@value #FAIL_AFTER_END}
 * is true: the ApplicationMaster runs the map again and two attempts of it push their whole output, as speculative
 * attempts do. Used by one map task's thread.
 */
public final class MarkingCollector<K, V> extends EstuaryMapOutputCollector<K, V> {
    static final String MARKERS = "test.estuary.markers";
    static final String FAIL_AFTER_END = "test.estuary.fail-after-end";
    private JobConf job;
    private MapTask task;

    @Override
    public void init(Context context) throws IOException, ClassNotFoundException {
        super.init(context);
        job = context.getJobConf();
        task = context.getMapTask();
    }

    @Override
    public void flush() throws IOException, InterruptedException {
        boolean ends = task.getPhase() == TaskStatus.Phase.SORT;
        super.flush();
        if (!ends) return;
        TaskAttemptID attempt = task.getTaskID();
        int map = attempt.getTaskID().getId();
        String dir = job.get(MARKERS);
        if (dir != null) {
            String name = MrJobKeys.appId(job, "local") + "-m" + map + "-a" + attempt.getId();
            Files.write(Paths.get(dir, name + ".tmp"), new byte[0]);
            Files.move(Paths.get(dir, name + ".tmp"), Paths.get(dir, name)); // appears whole
        }
        if (job.getBoolean(FAIL_AFTER_END, false) && map == 0 && attempt.getId() == 0) {
            throw new IOException("the first attempt of map 0 fails on purpose after its output ended in Estuary");
        }
    }
}
