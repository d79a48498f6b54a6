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
        long salesRows = (long) Math.max(100_000, scale * 4_000_000);
        w.put(
                String.format("sql: many exchanges (%.1fM rows, 20 partitions)", salesRows / 1e6),
                sc -> SqlWorkloads.manyExchanges(sc, salesRows, 20));
        w.put("1000 tiny shuffles (100 records, 2 maps x 2 reduces)", sc -> SqlWorkloads.tinyShuffles(sc, 1000));
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
            StageTimes stages = StageTimes.attach(sc);
            ProfileWindow profile = ProfileWindow.fromSystemProperties(sc); // bench/profile.sh only
            profile.open();
            for (Map.Entry<String, Function<JavaSparkContext, Workloads.Sum>> e :
                    workloads(scale).entrySet()) {
                String only =
                        System.getenv("BENCH_ONLY"); // e.g. BENCH_ONLY=terasort runs the workloads whose name has it
                if (only != null && !e.getKey().contains(only)) continue;
                long t0 = System.nanoTime();
                Workloads.Sum s = e.getValue().apply(sc);
                double secs = (System.nanoTime() - t0) / 1e9;
                System.out.printf("  %-8s %-52s %7.2f s  %s%n", label, e.getKey(), secs, s);
                System.out.printf("  %-8s   %s%n", "", stages.take(secs));
                lines.add(e.getKey() + "\t" + secs + "\t" + s.count + "\t" + s.sum);
            }
            profile.close();
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
     * Every run's time of each workload, from several runs (comma-separated result files). Every run must have
     * produced the same checksum, or the workload's sum is marked as a mismatch (-1, -1).
     */
    static Map<String, Runs> runs(String files) throws IOException {
        Map<String, Runs> all = new LinkedHashMap<>();
        for (String f : files.split(",")) {
            for (Map.Entry<String, Result> e : read(Paths.get(f)).entrySet()) {
                Runs r = all.computeIfAbsent(e.getKey(), k -> new Runs(e.getValue().sum));
                r.seconds.add(e.getValue().seconds);
                if (!r.sum.equals(e.getValue().sum)) r.sum = new Workloads.Sum(-1, -1);
            }
        }
        return all;
    }

    /** One workload's times over several runs, and their common checksum. */
    static final class Runs {
        final List<Double> seconds = new ArrayList<>();
        Workloads.Sum sum;

        Runs(Workloads.Sum sum) {
            this.sum = sum;
        }

        double min() {
            return seconds.stream().mapToDouble(Double::doubleValue).min().orElse(0);
        }

        double median() {
            double[] s =
                    seconds.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            return s.length == 0
                    ? 0
                    : s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        }
    }

    /**
     * {@code run native|estuary master scale out-file}: one implementation, in this JVM (bench/run.sh gives each its
     * own JVM, so neither runs on the other's warmed-up JIT). {@code compare native-files column...}: the table, each
     * workload's time natively and in every column with its ratio to native; a column is {@code label=files}, or
     * bare files for the first two (labelled "replicated", Estuary's default, and "1-copy"). Files are
     * comma-separated; the best run of each workload counts, and with several runs the median is printed too. Exits 1 when a checksum differs from native's.
     */
    public static void main(String[] args) throws IOException {
        if (args[0].equals("run")) {
            runAll(args[1].equals("native") ? null : args[2], Double.parseDouble(args[3]), Paths.get(args[4]));
            return;
        }
        List<String> bad = compare(args);
        if (!bad.isEmpty()) {
            System.out.println("checksum mismatch in: " + bad);
            System.exit(1);
        }
    }

    /**
     * The columns of {@code compare native-files column...} (arguments from the third on), label to files: {@code
     * label=files}, or bare files for the first two (labelled "replicated", Estuary's default, and "1-copy").
     */
    static Map<String, String> columns(String[] args) {
        Map<String, String> columns = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            columns.put(
                    eq > 0 ? args[i].substring(0, eq) : (i == 2 ? "replicated" : "1-copy"),
                    eq > 0 ? args[i].substring(eq + 1) : args[i]);
        }
        return columns;
    }

    /** Prints the tables of {@code compare} (see {@link #main}); returns the workloads whose checksum differs. */
    static List<String> compare(String[] args) throws IOException {
        Map<String, Runs> nat = runs(args[1]);
        List<String> labels = new ArrayList<>();
        List<Map<String, Runs>> columns = new ArrayList<>();
        for (Map.Entry<String, String> c : columns(args).entrySet()) {
            labels.add(c.getKey());
            columns.add(runs(c.getValue()));
        }
        // The best run first (bench/run.sh reads this table up to the median's header), then the median.
        List<String> bad = table(nat, labels, columns, Runs::min);
        int n = nat.values().stream().mapToInt(r -> r.seconds.size()).max().orElse(0);
        if (n > 1) {
            System.out.printf("%nmedian of %d runs%n", n);
            table(nat, labels, columns, Runs::median);
        }
        return bad;
    }

    /** Prints one table of {@code statistic} per workload; returns the workloads whose checksum differs. */
    private static List<String> table(
            Map<String, Runs> nat,
            List<String> labels,
            List<Map<String, Runs>> columns,
            java.util.function.ToDoubleFunction<Runs> statistic) {
        System.out.println();
        System.out.printf("%-52s %10s", "workload", "native s");
        for (String l : labels) System.out.printf(" %14s %7s", l + " s", "ratio");
        System.out.printf("  %s%n", "checksum");
        List<String> bad = new ArrayList<>();
        for (String k : nat.keySet()) {
            Runs n = nat.get(k);
            double ns = statistic.applyAsDouble(n);
            System.out.printf("%-52s %10.2f", k, ns);
            StringBuilder mismatch = new StringBuilder();
            for (int c = 0; c < columns.size(); c++) {
                Runs r = columns.get(c).get(k);
                double rs = r == null ? 0 : statistic.applyAsDouble(r);
                System.out.printf(" %14.2f %6.2fx", rs, rs / ns);
                if (r == null || !n.sum.equals(r.sum)) {
                    mismatch.append(' ').append(labels.get(c)).append(' ').append(r == null ? "-" : r.sum);
                }
            }
            if (mismatch.length() > 0) bad.add(k);
            System.out.printf("  %s%n", mismatch.length() == 0 ? "OK" : "MISMATCH native " + n.sum + ";" + mismatch);
        }
        return bad;
    }
}
