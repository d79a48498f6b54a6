package io.estuary.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Native sort shuffle against Estuary, same workloads, same JVM, one run. Prints each time and the
 * Estuary/native ratio, and fails when a checksum differs. Usage: ShuffleBenchmark master-host:port [scale]
 * (scale 1.0 = TeraSort-like on 2 GB).
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
    w.put(String.format("terasort-like (%.1f GB, 32 maps x 64 reduces)", teraRecords * 100.0 / (1L << 30)),
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
    w.put(String.format("wide (200 maps x 1000 reduces, %.0f MB)", wideRecords * 100.0 / (1 << 20)),
        sc -> Workloads.sum(Workloads.shuffle(Workloads.records(sc, wideRecords, 200, 7), 1000)));
    return w;
  }

  static Map<String, Result> runAll(String estuaryMaster, double scale) {
    JavaSparkContext sc = Sessions.start(estuaryMaster == null ? "bench-native" : "bench-estuary", estuaryMaster, 2);
    sc.setLogLevel("WARN");
    Map<String, Result> out = new LinkedHashMap<>();
    try {
      // Warm up the JIT and the connections so neither side pays for them inside a timed workload.
      Workloads.sum(Workloads.shuffle(Workloads.records(sc, 200_000, 4, 99), 8));
      for (Map.Entry<String, Function<JavaSparkContext, Workloads.Sum>> e : workloads(scale).entrySet()) {
        long t0 = System.nanoTime();
        Workloads.Sum s = e.getValue().apply(sc);
        double secs = (System.nanoTime() - t0) / 1e9;
        System.out.printf("  %-8s %-52s %7.2f s  %s%n", estuaryMaster == null ? "native" : "estuary", e.getKey(),
            secs, s);
        out.put(e.getKey(), new Result(secs, s));
      }
    } finally {
      sc.stop();
    }
    return out;
  }

  public static void main(String[] args) {
    String master = args[0];
    double scale = args.length > 1 ? Double.parseDouble(args[1]) : 1.0;
    System.out.println("Running every workload on native sort shuffle, then on Estuary (" + master + ")");
    Map<String, Result> nat = runAll(null, scale);
    Map<String, Result> est = runAll(master, scale);
    System.out.println();
    System.out.printf("%-52s %10s %10s %8s  %s%n", "workload", "native s", "estuary s", "ratio", "checksum");
    List<String> bad = new ArrayList<>();
    for (String k : nat.keySet()) {
      Result n = nat.get(k);
      Result e = est.get(k);
      boolean ok = n.sum.equals(e.sum);
      if (!ok) bad.add(k);
      System.out.printf("%-52s %10.2f %10.2f %7.2fx  %s%n", k, n.seconds, e.seconds, e.seconds / n.seconds,
          ok ? "OK" : "MISMATCH " + n.sum + " vs " + e.sum);
    }
    if (!bad.isEmpty()) {
      System.out.println("checksum mismatch in: " + bad);
      System.exit(1);
    }
  }
}
