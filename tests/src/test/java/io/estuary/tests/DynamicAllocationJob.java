package io.estuary.tests;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.Success$;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.Tuple2;

/**
 * Run by {@link DynamicAllocationTest} in its own JVM (local-cluster needs SPARK_HOME and SPARK_SCALA_VERSION in the
 * driver's environment): dynamic allocation with no external shuffle service and no shuffle tracking. Writes a
 * shuffle, waits until every executor is released, then reads the shuffle on new executors. Prints "DYNALLOC OK"
 * or exits with status 1 and says what went wrong. Args: the Estuary master endpoint.
 */
public final class DynamicAllocationJob {
    static final int MAPS = 4;
    static final int REDUCERS = 6;
    static final int RECORDS = 200_000;

    private DynamicAllocationJob() {}

    /** What the driver saw of executors and tasks. Listener callbacks run on Spark's listener thread. */
    static final class Events extends SparkListener {
        final Set<String> alive = ConcurrentHashMap.newKeySet();
        final Set<String> removed = ConcurrentHashMap.newKeySet();
        final Set<String> mapExecutors = ConcurrentHashMap.newKeySet();
        final Set<String> reduceExecutors = ConcurrentHashMap.newKeySet();
        final AtomicInteger mapTasks = new AtomicInteger();
        final AtomicInteger mapStageAttempts = new AtomicInteger();

        @Override
        public void onExecutorAdded(SparkListenerExecutorAdded e) {
            alive.add(e.executorId());
        }

        @Override
        public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
            alive.remove(e.executorId());
            removed.add(e.executorId());
        }

        @Override
        public void onStageSubmitted(SparkListenerStageSubmitted e) {
            if (e.stageInfo().shuffleDepId().isDefined()) mapStageAttempts.incrementAndGet();
        }

        @Override
        public void onTaskEnd(SparkListenerTaskEnd e) {
            if (e.reason() != Success$.MODULE$) return;
            if ("ShuffleMapTask".equals(e.taskType())) {
                mapTasks.incrementAndGet();
                mapExecutors.add(e.taskInfo().executorId());
            } else {
                reduceExecutors.add(e.taskInfo().executorId());
            }
        }
    }

    public static void main(String[] args) throws Exception {
        SparkConf conf = SparkSessions.estuary(SparkSessions.base("local-cluster[2,1,1024]", "dynalloc"), args[0])
                .set("spark.dynamicAllocation.enabled", "true")
                .set("spark.dynamicAllocation.executorIdleTimeout", "2s")
                .set("spark.dynamicAllocation.minExecutors", "0")
                .set("spark.dynamicAllocation.maxExecutors", "2")
                .set("spark.dynamicAllocation.schedulerBacklogTimeout", "1s")
                .set("spark.executor.memory", "512m")
                .set("spark.executor.extraClassPath", System.getProperty("java.class.path"));
        Events events = new Events();
        long t0 = System.nanoTime();
        JavaSparkContext sc = new JavaSparkContext(conf);
        String failure = null;
        try {
            sc.sc().addSparkListener(events);
            System.out.println("io plugin: " + sc.getConf().get("spark.shuffle.sort.io.plugin.class", "(unset)")
                    + ", shuffle tracking: "
                    + sc.getConf().get("spark.dynamicAllocation.shuffleTracking.enabled", "(unset)"));
            List<Integer> seeds = new ArrayList<>();
            for (int i = 0; i < MAPS; i++) seeds.add(i);
            JavaPairRDD<Integer, String> shuffled = sc.parallelize(seeds, MAPS)
                    .flatMapToPair(slice -> {
                        List<Tuple2<Integer, String>> out = new ArrayList<>();
                        for (int i = slice; i < RECORDS; i += MAPS)
                            out.add(new Tuple2<>((int) ((i * 2654435761L) % 5_003), "v" + i));
                        return out.iterator();
                    })
                    .partitionBy(new HashPartitioner(REDUCERS));

            // Stage 1: the map stage alone, as AQE submits it.
            ShuffleDependency<?, ?, ?> dep =
                    (ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head();
            sc.sc().submitMapStage(dep).get();
            long mapsDone = System.nanoTime();

            // Every executor idles out; nothing (no shuffle service, no tracking) keeps the map executors.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!(events.removed.containsAll(events.mapExecutors) && events.alive.isEmpty())
                    && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            Set<String> removedBeforeRead = new java.util.HashSet<>(events.removed);
            long released = System.nanoTime();
            System.out.println("map executors " + events.mapExecutors + ", removed " + removedBeforeRead + " "
                    + TimeUnit.NANOSECONDS.toMillis(released - mapsDone) + " ms after the map stage");

            // Stage 2: the reducers run on new executors and read what the released ones wrote.
            Checksum got = Checksum.of(shuffled.map(t -> t._1() + "=" + t._2()));
            List<String> rows = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) rows.add((int) ((i * 2654435761L) % 5_003) + "=v" + i);
            Checksum expected = Checksum.ofLocal(rows);
            System.out.println("read " + got + ", expected " + expected + "; reducers ran on " + events.reduceExecutors
                    + "; map tasks " + events.mapTasks + ", map stage attempts " + events.mapStageAttempts + "; total "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");

            if (events.mapExecutors.isEmpty() || !removedBeforeRead.containsAll(events.mapExecutors)) {
                failure = "the executors that ran the maps were not all released before the read";
            } else if (!got.equals(expected)) {
                failure = "checksum mismatch";
            } else if (events.mapTasks.get() != MAPS || events.mapStageAttempts.get() != 1) {
                failure = "the map stage ran again";
            } else if (events.reduceExecutors.isEmpty()
                    || events.reduceExecutors.stream().anyMatch(removedBeforeRead::contains)) {
                failure = "the reducers did not run on new executors";
            }
        } finally {
            sc.stop();
        }
        if (failure != null) {
            System.out.println("DYNALLOC FAILED: " + failure);
            System.exit(1);
        }
        System.out.println("DYNALLOC OK");
    }
}
