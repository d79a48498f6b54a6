package io.estuary.tests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * Run by {@link AuthenticatedSparkTest} in its own JVM (local-cluster needs SPARK_HOME and SPARK_SCALA_VERSION in the
 * driver's environment): a shuffle on separate executor JVMs with Estuary authentication on, so the executors prove
 * the secret the driver handed them. Then reads the event log: Spark must have redacted the secret. Prints
 * "CHECKSUM count sum", the executors that ran tasks and "AUTH CLUSTER OK", or exits with status 1 saying why.
 * Args: the Estuary master endpoint, the event log folder.
 */
public final class AuthenticatedSparkJob {
    static final String SECRET_KEY = "spark.estuary.auth.application.secret";

    private AuthenticatedSparkJob() {}

    public static void main(String[] args) throws Exception {
        Path eventLog = Files.createDirectories(Paths.get(args[1]));
        SparkConf conf = SparkSessions.estuary(SparkSessions.base("local-cluster[2,1,1024]", "auth-cluster"), args[0])
                .set("spark.estuary.auth.enabled", "true")
                .set("spark.executor.memory", "512m")
                .set("spark.executor.extraClassPath", System.getProperty("java.class.path"))
                .set("spark.eventLog.enabled", "true")
                .set("spark.eventLog.dir", eventLog.toUri().toString())
                .set("spark.eventLog.compress", "false"); // Spark 4 compresses it by default: read it as text
        SparkSession spark = SparkSessions.start(conf);
        String secret = spark.sparkContext().getConf().get(SECRET_KEY, "");
        Checksum sum = AuthenticatedSparkTest.reduceByKey(spark);
        List<String> executors = ShuffleJobs.jsc(spark)
                .parallelize(java.util.Arrays.asList(1, 2, 3, 4, 5, 6, 7, 8), 8)
                .map(i -> SparkEnv.get().executorId())
                .distinct()
                .collect();
        spark.stop();
        if (secret.isEmpty()) fail("the driver's SparkConf has no " + SECRET_KEY);
        String logged = read(eventLog);
        if (!logged.contains(SECRET_KEY)) fail("the event log does not list " + SECRET_KEY);
        if (logged.contains(secret)) fail("the event log holds the application secret");
        System.out.println("CHECKSUM " + sum.count + " " + sum.sum);
        System.out.println("EXECUTORS " + executors);
        System.out.println("AUTH CLUSTER OK");
    }

    private static String read(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            StringBuilder all = new StringBuilder();
            for (Path f : files.filter(Files::isRegularFile).collect(Collectors.toList())) {
                all.append(new String(Files.readAllBytes(f), StandardCharsets.UTF_8));
            }
            return all.toString();
        }
    }

    private static void fail(String why) {
        System.out.println("FAILED: " + why);
        System.exit(1);
    }

    /** The expected output of {@link AuthenticatedSparkTest#reduceByKey}, computed without Spark. */
    static Checksum expected(int n, int keys) {
        java.util.Map<Integer, Long> sums = new java.util.HashMap<>();
        for (int i = 0; i < n; i++) sums.merge((int) ((i * 2654435761L) % keys), (long) i, Long::sum);
        return Checksum.ofLocal(sums.entrySet().stream()
                .map(e -> new Tuple2<>(e.getKey(), e.getValue()))
                .collect(Collectors.toList()));
    }
}
