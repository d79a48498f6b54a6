package io.estuary.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Native sort shuffle against Estuary, same workloads, one invocation of bench/run.sh. Prints each time and the
 * Estuary/native ratio, and fails when a checksum differs (scale 1.0 = TeraSort-like on 2 GB).
 */
public final class ShuffleBenchmark {
    private ShuffleBenchmark() {}

    static final class Result {
        final double seconds;
        final Workloads.Sum sum;

        Result(double seconds, Workloads.Sum sum) {
            this.seconds = seconds;
            this.sum = sum;
        }
    }

    static Map<String, Function<JavaSparkContext, Workloads.Sum>> workloads(double scale) {
        Map<String, Function<JavaSparkContext, Workloads.Sum>> w = new LinkedHashMap<>();
        long teraRecords = (long) (scale * 2L * (1L << 30) / 100);
        w.put(
                String.format("terasort-like (%.1f GB, 32 maps x 64 reduces)", teraRecords * 100.0 / (1L << 30)),
                sc -> Workloads.sortAndCheck(Workloads.records(sc, teraRecords, 32, 1), 64));
        w.put("200 small shuffles (1 MB each, 4 maps x 4 reduces)", sc -> {
            long c = 0;
            long s = 0;
            for (int i = 0; i < 200; i++) {
                Workloads.Sum r = Workloads.sum(Workloads.shuffle(Workloads.records(sc, 10_485, 4, 100 + i), 4));
                c += r.count;
                s += r.sum;
            }
            return new Workloads.Sum(c, s);
        });
        long wideRecords = (long) (scale * 200 * 10_000);
        w.put(
                String.format("wide (200 maps x 1000 reduces, %.0f MB)", wideRecords * 100.0 / (1 << 20)),
                sc -> Workloads.sum(Workloads.shuffle(Workloads.records(sc, wideRecords, 200, 7), 1000)));
        return w;
    }

    /** Runs every workload on one shuffle implementation (estuaryMaster null: native) and records the results. */
    static void runAll(String estuaryMaster, double scale, Path out) throws IOException {
        // SparkConf reads spark.* system properties: bench/run.sh turns replication off with one for the 1-copy runs.
        String label = estuaryMaster == null
                ? "native"
                : "false".equals(System.getProperty("spark.estuary.client.push.replicate")) ? "1-copy" : "estuary";
        JavaSparkContext sc = Sessions.start("bench-" + label, estuaryMaster, 2);
        sc.setLogLevel("WARN");
        List<String> lines = new ArrayList<>();
        try {
            // Warm up the JITs (driver, and for Estuary the freshly started workers, whose compiler would otherwise
            // take
            // seconds of CPU inside the first timed workload) and the connections. Same warm-up for both sides.
            Workloads.sum(Workloads.shuffle(Workloads.records(sc, 2_000_000, 8, 99), 16));
            Workloads.sortAndCheck(Workloads.records(sc, 1_000_000, 8, 98), 16);
            for (Map.Entry<String, Function<JavaSparkContext, Workloads.Sum>> e :
                    workloads(scale).entrySet()) {
                String only =
                        System.getenv("BENCH_ONLY"); // e.g. BENCH_ONLY=terasort runs the workloads whose name has it
                if (only != null && !e.getKey().contains(only)) continue;
                long t0 = System.nanoTime();
                Workloads.Sum s = e.getValue().apply(sc);
                double secs = (System.nanoTime() - t0) / 1e9;
                System.out.printf("  %-8s %-52s %7.2f s  %s%n", label, e.getKey(), secs, s);
                lines.add(e.getKey() + "\t" + secs + "\t" + s.count + "\t" + s.sum);
            }
        } finally {
            sc.stop();
        }
        Files.write(out, lines, StandardCharsets.UTF_8);
    }

    static Map<String, Result> read(Path file) throws IOException {
        Map<String, Result> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String[] f = line.split("\t");
            out.put(
                    f[0],
                    new Result(
                            Double.parseDouble(f[1]), new Workloads.Sum(Long.parseLong(f[2]), Long.parseLong(f[3]))));
        }
        return out;
    }

    /**
     * The fastest of several runs (comma-separated result files) for each workload. Every run must have produced
     * the same checksum, or the result is marked as a mismatch.
     */
    static Map<String, Result> best(String files) throws IOException {
        Map<String, Result> best = new LinkedHashMap<>();
        for (String f : files.split(",")) {
            for (Map.Entry<String, Result> e : read(Paths.get(f)).entrySet()) {
                Result prev = best.get(e.getKey());
                if (prev != null && !prev.sum.equals(e.getValue().sum)) {
                    best.put(e.getKey(), new Result(prev.seconds, new Workloads.Sum(-1, -1)));
                } else if (prev == null || e.getValue().seconds < prev.seconds) {
                    best.put(e.getKey(), e.getValue());
                }
            }
        }
        return best;
    }

    /**
     * {@code run native|estuary master scale out-file}: one implementation, in this JVM (bench/run.sh gives each its
     * own JVM, so neither runs on the other's warmed-up JIT). {@code compare native-files estuary-files
     * [single-copy-files]}: the table (files comma-separated; the best run of each workload counts), Estuary with
     * replicas (its default) and, when given, with one copy.
     */
    public static void main(String[] args) throws IOException {
        if (args[0].equals("run")) {
            runAll(args[1].equals("native") ? null : args[2], Double.parseDouble(args[3]), Paths.get(args[4]));
            return;
        }
        Map<String, Result> nat = best(args[1]);
        Map<String, Result> est = best(args[2]);
        Map<String, Result> single = args.length > 3 ? best(args[3]) : null;
        System.out.println();
        System.out.printf("%-52s %10s %12s %8s", "workload", "native s", "replicated s", "ratio");
        if (single != null) System.out.printf(" %10s %8s", "1-copy s", "ratio");
        System.out.printf("  %s%n", "checksum");
        List<String> bad = new ArrayList<>();
        for (String k : nat.keySet()) {
            Result n = nat.get(k);
            Result e = est.get(k);
            Result o = single == null ? null : single.get(k);
            boolean ok = e != null && n.sum.equals(e.sum) && (single == null || (o != null && n.sum.equals(o.sum)));
            if (!ok) bad.add(k);
            System.out.printf(
                    "%-52s %10.2f %12.2f %7.2fx",
                    k, n.seconds, e == null ? 0 : e.seconds, e == null ? 0 : e.seconds / n.seconds);
            if (single != null) {
                System.out.printf(" %10.2f %7.2fx", o == null ? 0 : o.seconds, o == null ? 0 : o.seconds / n.seconds);
            }
            System.out.printf(
                    "  %s%n",
                    ok
                            ? "OK"
                            : "MISMATCH " + n.sum + " vs " + (e == null ? "-" : e.sum)
                                    + (o == null ? "" : " / " + o.sum));
        }
        if (!bad.isEmpty()) {
            System.out.println("checksum mismatch in: " + bad);
            System.exit(1);
        }
    }
}
