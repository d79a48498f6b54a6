package io.estuary.tests;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * Run by {@link ShadedJarTest} in a JVM whose only Estuary classes are the shaded jar's: a shuffle through the
 * cluster at args[0], checked against the expected sums. Prints "checksum OK" and where the manager came from. A
 * buffer the client's relocated Netty leaked is printed ("LEAK:") and fails the job (exit status 2).
 */
public final class ShadedJarJob {
    private ShadedJarJob() {}

    public static void main(String[] args) throws Exception {
        ShadedLeakDetector.install(); // before the client makes its first buffer
        SparkSession spark =
                SparkSessions.start(SparkSessions.estuary(SparkSessions.base("local[2]", "shaded"), args[0]));
        try {
            JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
            List<Integer> data = new ArrayList<>();
            for (int i = 0; i < 50_000; i++) data.add(i);
            List<Tuple2<Integer, Long>> out = sc.parallelize(data, 4)
                    .mapToPair(i -> new Tuple2<>(i % 100, (long) i))
                    .reduceByKey(Long::sum, 7)
                    .collect();
            long total = 0;
            for (Tuple2<Integer, Long> t : out) total += t._2();
            long expected = 49_999L * 50_000L / 2;
            System.out.println("manager loaded from "
                    + Class.forName(SparkSessions.MANAGER)
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation());
            System.out.println("netty inside the client: "
                    + Class.forName("io.estuary.network.client.TransportClient")
                            .getDeclaredField("channel")
                            .getType()
                            .getName());
            System.out.println("lz4 inside the client: "
                    + Class.forName("io.estuary.client.batch.Lz4Blocks")
                            .getDeclaredField("LZ4")
                            .getType()
                            .getName());
            // Spark's own lz4-java (unrelocated, with its native library) compresses: EngineLz4Compressor.
            Field engineLz4 =
                    Class.forName("io.estuary.client.batch.EngineLz4Compressor").getDeclaredField("NATIVE");
            engineLz4.setAccessible(true);
            System.out.println("lz4 compresses natively: " + (engineLz4.get(null) != null));
            // Set by the client for its relocated Netty (RelocatedNettySetup): pool chunks without zeroing.
            System.out.println("relocated netty without cleaner: "
                    + Class.forName("io.estuary.shaded.io.netty.util.internal.PlatformDependent")
                            .getMethod("useDirectBufferNoCleaner")
                            .invoke(null));
            if (out.size() != 100 || total != expected) {
                System.out.println("checksum MISMATCH: " + out.size() + " keys, total " + total);
                System.exit(1);
            }
            System.out.println("checksum OK");
        } finally {
            spark.stop();
        }
        String notTracked = ShadedLeakDetector.notInstalledReason();
        if (notTracked != null) {
            System.out.println("LEAK: detection is not working: " + notTracked);
            System.exit(2);
        }
        List<String> leaks = ShadedLeakDetector.collectLeaks();
        for (String leak : leaks) System.out.println(leak);
        if (!leaks.isEmpty()) System.exit(2);
    }
}
