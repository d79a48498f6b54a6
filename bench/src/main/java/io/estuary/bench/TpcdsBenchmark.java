package io.estuary.bench;

import com.google.common.hash.Hashing;
import io.trino.tpcds.Session;
import io.trino.tpcds.Table;
import io.trino.tpcds.TableGenerator;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.util.CharVarcharUtils;
import org.apache.spark.sql.execution.benchmark.TPCDSSchemaHelper$;
import org.apache.spark.sql.types.StructType;
import scala.collection.JavaConverters;

/**
 * The TPC-DS-style run of bench/run.sh ({@code BENCH_SUITE=tpcds}): the 103 queries Spark itself tests with (read
 * from Spark's own test jar, {@code tpcds/q*.sql}), over tables made by a Java port of the TPC-DS data generator
 * (io.trino.tpcds) and written once as Parquet per scale factor. Each query's result is reduced to a row count and an
 * order-independent checksum, so that native and Estuary runs must agree query by query.
 *
 * <p>Modes: {@code generate SCALE} makes the tables (once; later calls find them); {@code run native|estuary MASTER
 * SCALE OUT} runs every query in this JVM and writes one line per query in {@link ShuffleBenchmark}'s result format
 * (name, seconds, rows, checksum); {@code compare NATIVE COLUMN...} prints {@link ShuffleBenchmark}'s table, then the
 * totals, the queries over 1.3x and the slowest ratios. {@code BENCH_ONLY=q1,q14a} runs only those queries.
 * Stateless; each mode runs on the calling thread (table generation on a pool of one thread per core).
 */
public final class TpcdsBenchmark {
    private TpcdsBenchmark() {}

    /** The ratio over which a query counts as much slower than native (issue 18's target: none over it). */
    private static final double SLOW_RATIO = 1.3;

    /** Where the tables of a scale factor live (bench/target, or TPCDS_DATA when set). */
    static Path dataDir(double scale) {
        String base = System.getenv().getOrDefault("TPCDS_DATA", "bench/target/tpcds");
        return Paths.get(
                base, "sf" + BigDecimal.valueOf(scale).stripTrailingZeros().toPlainString());
    }

    /** The queries, in Spark's test jar: q1 ... q99, with the a/b variants, 103 in all. */
    static List<String> queries() {
        List<String> names = new ArrayList<>();
        for (int i = 1; i <= 99; i++) {
            if (i == 14 || i == 23 || i == 24 || i == 39) {
                names.add("q" + i + "a");
                names.add("q" + i + "b");
            } else {
                names.add("q" + i);
            }
        }
        String only = System.getenv("BENCH_ONLY");
        if (only == null || only.isEmpty()) return names;
        List<String> wanted = Arrays.asList(only.split(","));
        return names.stream().filter(wanted::contains).collect(Collectors.toList());
    }

    static String queryText(String name) throws IOException {
        try (InputStream in = TpcdsBenchmark.class.getClassLoader().getResourceAsStream("tpcds/" + name + ".sql")) {
            if (in == null) throw new IOException("no tpcds/" + name + ".sql on the class path (Spark's sql test jar)");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Spark's TPC-DS schema (its test jar), with CHAR/VARCHAR read as strings, as its own benchmark loads them. */
    static Map<String, StructType> schemas() {
        return JavaConverters.mapAsJavaMap(TPCDSSchemaHelper$.MODULE$.getTableColumns()).entrySet().stream()
                .collect(Collectors.toMap(
                        Map.Entry::getKey, e -> CharVarcharUtils.replaceCharVarcharWithStringInSchema(e.getValue())));
    }

    /**
     * Generates every table of the scale factor as '|'-separated text, in as many chunks as there are cores, then
     * writes it as Parquet with Spark's schema and removes the text. A directory already marked complete is kept.
     */
    static void generate(double scale) throws Exception {
        Path dir = dataDir(scale);
        Path done = dir.resolve("_COMPLETE");
        if (Files.exists(done)) {
            System.out.println("TPC-DS tables at scale " + scale + " already in " + dir);
            return;
        }
        Path raw = dir.resolve("raw");
        Files.createDirectories(raw);
        int chunks = Runtime.getRuntime().availableProcessors();
        long t0 = System.nanoTime();
        Session base =
                new Session(scale, raw.toString(), ".dat", Optional.empty(), "", '|', true, false, chunks, 1, true);
        ExecutorService pool = Executors.newFixedThreadPool(chunks);
        try {
            List<Future<?>> parts = new ArrayList<>();
            for (int c = 1; c <= chunks; c++) {
                Session s = base.withChunkNumber(c);
                parts.add(pool.submit(() -> {
                    TableGenerator g = new TableGenerator(s);
                    for (Table t : Table.getBaseTables()) g.generateTable(t);
                }));
            }
            for (Future<?> f : parts) f.get();
        } finally {
            pool.shutdown();
        }
        System.out.printf("generated scale %s as text in %.1f s%n", scale, (System.nanoTime() - t0) / 1e9);
        SparkSession spark = SparkSession.builder()
                .config(Sessions.conf("tpcds-generate", null, "local[*]"))
                .getOrCreate();
        try {
            for (Map.Entry<String, StructType> e : schemas().entrySet()) {
                String table = e.getKey();
                // table_CHUNK_CHUNKS.dat: the digit keeps "store" from matching store_sales. Chunks > 1 of a small
                // table are empty files: Spark reads them as no rows.
                String glob = raw.resolve(table + "_[0-9]*_" + chunks + ".dat").toString();
                spark.read()
                        .schema(e.getValue())
                        .option("sep", "|")
                        .option("dateFormat", "yyyy-MM-dd")
                        .csv(glob)
                        .write()
                        .mode("overwrite")
                        .parquet(dir.resolve(table).toString());
                // A wrong file set or column layout shows as a wrong count. A sales table's count is of orders, not
                // rows, and a returns table is drawn with its sales: neither has an expected row count.
                long rows = spark.read().parquet(dir.resolve(table).toString()).count();
                Table t = Table.getTable(table);
                long expected =
                        t.isChild() || t.hasChild() ? rows : base.getScaling().getRowCount(t);
                if (rows != expected)
                    throw new IllegalStateException(table + ": " + rows + " rows, expected " + expected);
                System.out.printf("  %-24s %,12d rows%n", table, rows);
            }
        } finally {
            spark.stop();
        }
        try (Stream<Path> files = Files.walk(raw)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        Files.write(done, List.of(String.valueOf(scale)));
        System.out.printf(
                "TPC-DS tables at scale %s written to %s in %.1f s%n", scale, dir, (System.nanoTime() - t0) / 1e9);
    }

    /** Runs every query on one shuffle implementation (estuaryMaster null: native) and records the results. */
    static void runAll(String estuaryMaster, double scale, Path out) throws IOException {
        Path dir = dataDir(scale);
        if (!Files.exists(dir.resolve("_COMPLETE")))
            throw new IOException("no TPC-DS tables in " + dir + ": generate first");
        String label = estuaryMaster == null
                ? "native"
                : "false".equals(System.getProperty("spark.estuary.client.push.replicate")) ? "1-copy" : "estuary";
        SparkConf conf = Sessions.conf("tpcds-" + label, estuaryMaster, "local[2]");
        SparkSession spark = SparkSession.builder().config(conf).getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        List<String> lines = new ArrayList<>();
        try {
            for (String table : schemas().keySet()) {
                spark.read().parquet(dir.resolve(table).toString()).createOrReplaceTempView(table);
            }
            // Warm up the JITs and connections, the same on both sides: three queries with joins and aggregations.
            for (String q : List.of("q3", "q7", "q19"))
                checksum(spark.sql(queryText(q)).collectAsList());
            for (String q : queries()) {
                String text = queryText(q);
                long t0 = System.nanoTime();
                List<Row> rows = spark.sql(text).collectAsList();
                double secs = (System.nanoTime() - t0) / 1e9;
                Workloads.Sum s = new Workloads.Sum(rows.size(), checksum(rows));
                System.out.printf("  %-8s %-6s %7.2f s  %s%n", label, q, secs, s);
                lines.add(q + "\t" + secs + "\t" + s.count + "\t" + s.sum);
            }
        } finally {
            spark.stop();
        }
        Files.write(out, lines, StandardCharsets.UTF_8);
    }

    /**
     * Sum of the rows' hashes: independent of row order. Floating-point values count to 10 significant digits (a sum
     * of doubles depends on the order its terms arrive in, which the shuffle does not fix; decimals are exact).
     */
    static long checksum(List<Row> rows) {
        long sum = 0;
        for (Row r : rows) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < r.length(); i++) {
                Object v = r.get(i);
                if (v instanceof Double || v instanceof Float) {
                    double d = ((Number) v).doubleValue();
                    v = Double.isFinite(d)
                            ? new BigDecimal(d).round(new MathContext(10)).stripTrailingZeros()
                            : v;
                }
                b.append(v).append('\u0001');
            }
            sum += Hashing.murmur3_128().hashString(b, StandardCharsets.UTF_8).asLong();
        }
        return sum;
    }

    /** Totals and the queries over {@link #SLOW_RATIO}, by each column's best run. */
    static void summary(String nativeFiles, Map<String, String> columns) throws IOException {
        Map<String, ShuffleBenchmark.Runs> nat = ShuffleBenchmark.runs(nativeFiles);
        double natTotal =
                nat.values().stream().mapToDouble(ShuffleBenchmark.Runs::min).sum();
        System.out.printf("%ntotal of %d queries (best runs): native %.1f s%n", nat.size(), natTotal);
        for (Map.Entry<String, String> c : columns.entrySet()) {
            Map<String, ShuffleBenchmark.Runs> col = ShuffleBenchmark.runs(c.getValue());
            double total = 0;
            List<String> slow = new ArrayList<>();
            List<Map.Entry<String, Double>> ratios = new ArrayList<>();
            for (Map.Entry<String, ShuffleBenchmark.Runs> e : nat.entrySet()) {
                ShuffleBenchmark.Runs r = col.get(e.getKey());
                if (r == null) continue;
                total += r.min();
                double ratio = r.min() / e.getValue().min();
                ratios.add(Map.entry(e.getKey(), ratio));
                if (ratio > SLOW_RATIO) slow.add(e.getKey());
            }
            ratios.sort(Map.Entry.<String, Double>comparingByValue().reversed());
            long faster = ratios.stream().filter(r -> r.getValue() < 1).count();
            System.out.printf(
                    "  %-10s %.1f s = %.2fx native; %d queries faster than native, %d over %.1fx %s; slowest: %s%n",
                    c.getKey(),
                    total,
                    total / natTotal,
                    faster,
                    slow.size(),
                    SLOW_RATIO,
                    slow,
                    ratios.stream()
                            .limit(5)
                            .map(r -> String.format("%s %.2fx", r.getKey(), r.getValue()))
                            .collect(Collectors.joining(", ")));
        }
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "generate":
                generate(Double.parseDouble(args[1]));
                return;
            case "run":
                runAll(args[1].equals("native") ? null : args[2], Double.parseDouble(args[3]), Paths.get(args[4]));
                return;
            case "compare":
                List<String> bad = ShuffleBenchmark.compare(args);
                summary(args[1], ShuffleBenchmark.columns(args));
                if (!bad.isEmpty()) {
                    System.out.println("checksum mismatch in: " + bad);
                    System.exit(1);
                }
                return;
            default:
                throw new IllegalArgumentException(
                        "generate SCALE | run native|estuary MASTER SCALE OUT | compare ...");
        }
    }
}
