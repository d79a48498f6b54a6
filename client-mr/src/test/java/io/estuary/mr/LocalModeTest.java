package io.estuary.mr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.EstuaryConf;
import io.estuary.worker.MiniCluster;
import java.io.File;
import java.nio.file.Files;
import java.util.Collections;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Every job runs under LocalJobRunner twice in this JVM, on MapReduce's own shuffle and on Estuary (a real master
 * and two real workers on loopback, the lifecycle manager in this JVM): the outputs must match line for line (count
 * and order-independent checksum; global order for the sort). Sort buffers and reduce memory are small, so maps
 * spill several times and reducers merge to disk. The total-order sort is 100 MiB (4 maps); bench/mr-terasort.sh
 * sorts more.
 * LocalJobRunner never retries a task; failed map attempts are tested on YARN ({@link YarnClusterTest}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalModeTest {
    private MiniCluster cluster;
    private java.nio.file.Path tmp;
    private Configuration base;

    @BeforeAll
    void start() throws Exception {
        cluster = new MiniCluster(2, 1, new EstuaryConf());
        tmp = Files.createTempDirectory("estuary-mr-local");
        base = new Configuration();
        base.set("fs.defaultFS", "file:///");
        base.set("mapreduce.framework.name", "local");
        base.set("mapreduce.cluster.local.dir", tmp.resolve("local").toString());
        base.set("mapreduce.jobtracker.staging.root.dir", tmp.resolve("staging").toString());
        base.setInt("mapreduce.local.map.tasks.maximum", 2);
        base.setInt("mapreduce.local.reduce.tasks.maximum", 4);
        base.setInt("mapreduce.task.io.sort.mb", 4);
        base.setLong("mapreduce.input.fileinputformat.split.maxsize", 4L << 20);
        base.setLong("mapreduce.reduce.memory.totalbytes", 16L << 20);
    }

    @AfterAll
    void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    private Configuration nativeConf() {
        return new Configuration(base);
    }

    private Configuration estuaryConf() {
        return TestJobs.withEstuary(new Configuration(base), cluster.masterEndpoint());
    }

    private Path path(String name) {
        return new Path(tmp.resolve(name).toUri());
    }

    @Test
    void wordCountWithCombiner() throws Exception {
        Path in = path("words");
        TestInputs.words(base, new Path(in, "words.txt"), 8L << 20);
        JobOutput expected = TestJobs.wordCount(nativeConf(), in, path("wc-native"), 3);
        Counters nativeCounters = TestJobs.lastCounters;
        int jobsBefore = LocalLifecycles.jobsSeen();
        JobOutput actual = TestJobs.wordCount(estuaryConf(), in, path("wc-estuary"), 3);
        assertEquals(expected, actual);
        assertCountersAsNative(nativeCounters, TestJobs.lastCounters, true);
        assertEquals(jobsBefore + 1, LocalLifecycles.jobsSeen(), "the job did not go through Estuary");
    }

    @Test
    void totalOrderSort() throws Exception {
        Path in = path("sort-in");
        for (int i = 0; i < 4; i++) TestInputs.sortRecords(base, new Path(in, "part" + i), 25L << 20, i); // 100 MiB
        JobOutput expected = TestJobs.totalOrderSort(nativeConf(), in, path("sort-native"), 6);
        Counters nativeCounters = TestJobs.lastCounters;
        JobOutput actual = TestJobs.totalOrderSort(estuaryConf(), in, path("sort-estuary"), 6);
        assertTrue(expected.globallySorted, "native output is not sorted");
        assertEquals(expected, actual);
        assertCountersAsNative(nativeCounters, TestJobs.lastCounters, false);
    }

    @Test
    void secondarySortWithGroupingComparator() throws Exception {
        Path in = path("groups");
        TestInputs.groups(base, new Path(in, "groups.txt"), 300_000);
        JobOutput expected = TestJobs.secondarySort(nativeConf(), in, path("ss-native"));
        assertEquals(500, expected.lines);
        Counters nativeCounters = TestJobs.lastCounters;
        assertEquals(expected, TestJobs.secondarySort(estuaryConf(), in, path("ss-estuary")));
        assertCountersAsNative(nativeCounters, TestJobs.lastCounters, false);
    }

    @Test
    void reduceSideJoin() throws Exception {
        Path in = path("join");
        TestInputs.usersAndOrders(base, new Path(in, "data.txt"), 5_000, 200_000);
        JobOutput expected = TestJobs.reduceSideJoin(nativeConf(), in, path("join-native"));
        assertTrue(expected.lines > 150_000);
        Counters nativeCounters = TestJobs.lastCounters;
        assertEquals(expected, TestJobs.reduceSideJoin(estuaryConf(), in, path("join-estuary")));
        assertCountersAsNative(nativeCounters, TestJobs.lastCounters, false);
    }

    @Test
    void fiveHundredReducers() throws Exception {
        Path in = path("words-small");
        TestInputs.words(base, new Path(in, "words.txt"), 1L << 20);
        JobOutput expected = TestJobs.wordCount(nativeConf(), in, path("wc500-native"), 500);
        Counters nativeCounters = TestJobs.lastCounters;
        assertEquals(expected, TestJobs.wordCount(estuaryConf(), in, path("wc500-estuary"), 500));
        assertCountersAsNative(nativeCounters, TestJobs.lastCounters, true);
    }

    @Test
    void emptyInput() throws Exception {
        Path in = path("empty");
        TestInputs.empty(base, new Path(in, "empty.txt"));
        JobOutput expected = TestJobs.wordCount(nativeConf(), in, path("empty-native"), 3);
        assertEquals(0, expected.lines);
        Counters nativeCounters = TestJobs.lastCounters;
        assertEquals(expected, TestJobs.wordCount(estuaryConf(), in, path("empty-estuary"), 3));
        assertCountersAsNative(nativeCounters, TestJobs.lastCounters, true);
    }

    @Test
    void mapOnlyJobNeverTouchesEstuary() throws Exception {
        Path in = path("words-maponly");
        TestInputs.words(base, new Path(in, "words.txt"), 1L << 20);
        JobOutput expected = TestJobs.mapOnly(nativeConf(), in, path("maponly-native"));
        Set<File> filesBefore = cluster.dataFiles();
        int jobsBefore = LocalLifecycles.jobsSeen();
        // No master listens there: the job can only succeed if it never asks for one.
        Configuration c = TestJobs.withEstuary(new Configuration(base), "127.0.0.1:1");
        assertEquals(expected, TestJobs.mapOnly(c, in, path("maponly-estuary")));
        // Compared as sets: earlier tests' expired shuffles may be deleted meanwhile, which a count would confuse.
        Set<File> written = cluster.dataFiles();
        written.removeAll(filesBefore);
        assertEquals(Collections.emptySet(), written, "partition files the map-only job wrote");
        assertEquals(jobsBefore, LocalLifecycles.jobsSeen());
    }

    /**
     * With maps that spill once, every map-side and reduce-side record counter is the native one: the collector
     * combines the same records at the same (single) spill, and the reducer's merge manager gets the same records.
     * Only the shuffle's byte counts differ, by design (see {@link #assertCountersAsNative}).
     */
    @Test
    void countersMatchNativeWhenEachMapSpillsOnce() throws Exception {
        Path in = path("words-once");
        TestInputs.words(base, new Path(in, "words.txt"), 6L << 20);
        Configuration n = nativeConf();
        n.setInt("mapreduce.task.io.sort.mb", 64);
        JobOutput expected = TestJobs.wordCount(n, in, path("once-native"), 3);
        Counters nativeCounters = TestJobs.lastCounters;
        Configuration e = estuaryConf();
        e.setInt("mapreduce.task.io.sort.mb", 64);
        assertEquals(expected, TestJobs.wordCount(e, in, path("once-estuary"), 3));
        Counters estuary = TestJobs.lastCounters;
        assertCountersAsNative(nativeCounters, estuary, true);
        for (TaskCounter c : new TaskCounter[] {
            TaskCounter.COMBINE_INPUT_RECORDS,
            TaskCounter.COMBINE_OUTPUT_RECORDS,
            TaskCounter.SPILLED_RECORDS,
            TaskCounter.REDUCE_INPUT_RECORDS
        }) {
            assertEquals(value(nativeCounters, c), value(estuary, c), c.name());
        }
    }

    /**
     * The counters Estuary keeps as native MapReduce does, whatever the spills: map input and output records, map
     * output bytes, reduce input groups and output records; without a combiner also reduce input records and combine
     * records (none). With a combiner, the records the combiner gets and gives depend on where spills fall (the
     * native collector also combines again while merging three or more spills), so Estuary's are checked for
     * consistency instead: every map output record is combined once, and what the combiner gives is what reducers
     * get. Reduce shuffle bytes count the bytes read from Estuary (its framing, maybe compressed), not IFile
     * segments, so they differ from native; as natively, they equal the map output materialized bytes.
     */
    private static void assertCountersAsNative(Counters nativeCounters, Counters estuary, boolean combiner) {
        for (TaskCounter c : new TaskCounter[] {
            TaskCounter.MAP_INPUT_RECORDS,
            TaskCounter.MAP_OUTPUT_RECORDS,
            TaskCounter.MAP_OUTPUT_BYTES,
            TaskCounter.REDUCE_INPUT_GROUPS,
            TaskCounter.REDUCE_OUTPUT_RECORDS
        }) {
            assertEquals(value(nativeCounters, c), value(estuary, c), c.name());
        }
        long mapOutput = value(estuary, TaskCounter.MAP_OUTPUT_RECORDS);
        if (combiner) {
            assertEquals(mapOutput, value(estuary, TaskCounter.COMBINE_INPUT_RECORDS), "combine input records");
            assertTrue(value(nativeCounters, TaskCounter.COMBINE_INPUT_RECORDS) >= mapOutput);
            assertEquals(
                    value(estuary, TaskCounter.COMBINE_OUTPUT_RECORDS),
                    value(estuary, TaskCounter.REDUCE_INPUT_RECORDS),
                    "combine output records against reduce input records");
        } else {
            for (TaskCounter c : new TaskCounter[] {
                TaskCounter.COMBINE_INPUT_RECORDS, TaskCounter.COMBINE_OUTPUT_RECORDS, TaskCounter.REDUCE_INPUT_RECORDS
            }) {
                assertEquals(value(nativeCounters, c), value(estuary, c), c.name());
            }
        }
        long shuffled = value(estuary, TaskCounter.REDUCE_SHUFFLE_BYTES);
        assertEquals(mapOutput > 0, shuffled > 0, "reduce shuffle bytes " + shuffled);
        assertEquals(
                value(estuary, TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES),
                shuffled,
                "reduce shuffle bytes against map output materialized bytes");
        assertEquals(
                value(nativeCounters, TaskCounter.MAP_OUTPUT_MATERIALIZED_BYTES),
                value(nativeCounters, TaskCounter.REDUCE_SHUFFLE_BYTES),
                "native shuffle bytes");
    }

    private static long value(Counters counters, TaskCounter c) {
        return counters.findCounter(c).getValue();
    }
}
