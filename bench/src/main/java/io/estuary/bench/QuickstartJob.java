package io.estuary.bench;

import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * The README's main job: shuffles about 1 GB through an Estuary cluster and checks that every record arrived
 * exactly once. Usage: QuickstartJob master-host:port [gigabytes]
 */
public final class QuickstartJob {
    private QuickstartJob() {}

    public static void main(String[] args) {
        String master = args[0];
        double gb = args.length > 1 ? Double.parseDouble(args[1]) : 1.0;
        long records = (long) (gb * (1L << 30) / 100);
        int maps = 16;
        int reducers = 32;
        JavaSparkContext sc = Sessions.start("estuary-quickstart", master, 2);
        sc.setLogLevel("WARN");
        try {
            JavaPairRDD<Long, byte[]> input = Workloads.records(sc, records, maps, 42);
            Workloads.Sum expected = Workloads.sum(input);
            long t0 = System.nanoTime();
            Workloads.Sum got = Workloads.sum(Workloads.shuffle(input, reducers));
            double secs = (System.nanoTime() - t0) / 1e9;
            double mb = records * 100.0 / (1 << 20);
            System.out.printf(
                    "rows: %d written, %d read back through Estuary (%d maps -> %d reducers)%n",
                    expected.count, got.count, maps, reducers);
            if (!expected.equals(got)) {
                System.out.println("checksum MISMATCH: expected " + expected + ", got " + got);
                System.exit(1);
            }
            System.out.println("checksum OK (" + Long.toHexString(got.sum) + ")");
            System.out.printf("throughput: %.0f MB shuffled in %.1f s = %.1f MB/s%n", mb, secs, mb / secs);
        } finally {
            sc.stop();
        }
    }
}
