package io.estuary.mr;

import io.estuary.common.config.EstuaryConf;
import io.estuary.worker.MiniCluster;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * A TeraSort-like MapReduce job (random 10-letter keys, 92-byte records, total-order sort with
 * TotalOrderPartitioner) under LocalJobRunner, on MapReduce's own shuffle and then on Estuary, in one run; prints
 * both times and their ratio and checks that the outputs match (count, checksum, global order). Not a test: run by
 * {@code bench/mr-terasort.sh}.
 *
 * <p>Arguments: gigabytes (default 1), reducers (default 8), master endpoints (default: a master and two workers
 * started in this JVM on loopback).
 */
public final class TeraSortBench {
    private TeraSortBench() {}

    public static void main(String[] args) throws Exception {
        double gb = args.length > 0 ? Double.parseDouble(args[0]) : 1;
        int reducers = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        MiniCluster cluster = args.length > 2 ? null : new MiniCluster(2, 1, new EstuaryConf());
        String masters = args.length > 2 ? args[2] : cluster.masterEndpoint();
        java.nio.file.Path tmp = Files.createTempDirectory("estuary-mr-terasort");
        try {
            Configuration base = new Configuration();
            base.set("fs.defaultFS", "file:///");
            base.set("mapreduce.framework.name", "local");
            base.set("mapreduce.cluster.local.dir", tmp.resolve("local").toString());
            base.set(
                    "mapreduce.jobtracker.staging.root.dir",
                    tmp.resolve("staging").toString());
            base.setInt("mapreduce.local.map.tasks.maximum", 2);
            base.setInt("mapreduce.local.reduce.tasks.maximum", 2);
            base.setLong("mapreduce.reduce.memory.totalbytes", 512L << 20);
            Path in = new Path(tmp.resolve("in").toUri());
            long fileBytes = 128L << 20;
            long total = (long) (gb * (1L << 30));
            long t0 = System.nanoTime();
            for (int i = 0; (long) i * fileBytes < total; i++) {
                TestInputs.sortRecords(
                        base, new Path(in, "part" + i), Math.min(fileBytes, total - (long) i * fileBytes), i);
            }
            System.out.printf("generated %.2f GB in %.1f s%n", gb, (System.nanoTime() - t0) / 1e9);

            long n0 = System.nanoTime();
            JobOutput expected = TestJobs.totalOrderSort(
                    new Configuration(base),
                    in,
                    new Path(tmp.resolve("out-native").toUri()),
                    reducers);
            double nativeSeconds = (System.nanoTime() - n0) / 1e9;
            System.out.printf("native shuffle:  %.1f s (%s)%n", nativeSeconds, expected);

            long e0 = System.nanoTime();
            JobOutput actual = TestJobs.totalOrderSort(
                    TestJobs.withEstuary(new Configuration(base), masters),
                    in,
                    new Path(tmp.resolve("out-estuary").toUri()),
                    reducers);
            double estuarySeconds = (System.nanoTime() - e0) / 1e9;
            System.out.printf("estuary shuffle: %.1f s (%s)%n", estuarySeconds, actual);
            System.out.printf("ratio estuary/native: %.2f%n", estuarySeconds / nativeSeconds);
            if (!expected.equals(actual) || !actual.globallySorted) {
                System.out.println("MISMATCH: the outputs differ");
                System.exit(1);
            }
        } finally {
            if (cluster != null) cluster.close();
            org.apache.commons.io.FileUtils.deleteQuietly(tmp.toFile());
        }
        System.exit(0);
    }
}
