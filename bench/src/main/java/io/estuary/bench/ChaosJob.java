package io.estuary.bench;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkConf;
import org.apache.spark.Success$;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * One run of bench/chaos.sh's job: a TeraSort-like sort of generated 100-byte records through Estuary on
 * {@code local[2,4]} (4 attempts per task), checked by count and an order-independent checksum against what the
 * generator produces. Always exits 0 so that the script can count failures; the verdict is the last line:
 * <pre>RESULT ok|wrong|failed seconds=&lt;t&gt; reruns=&lt;stage attempts after the first&gt; taskFailures=&lt;n&gt; ...</pre>
 * Usage:
 * <ul>
 *   <li>{@code ChaosJob master-host:port gigabytes replicate(true|false) [expectedCount expectedSum]}: one run
 *       (without the expected values, they are computed from the generator first, untimed);</li>
 *   <li>{@code ChaosJob expect gigabytes}: prints {@code EXPECTED <count> <sum>} from the generator alone (no
 *       shuffle).</li>
 * </ul>
 * {@code JOB_START} is printed when the timed job begins (after the Spark context is up), so that the script can
 * time its kill from there.
 */
public final class ChaosJob {
    private ChaosJob() {}

    static final int MAPS = 32;
    static final int REDUCES = 64;
    static final long SEED = 4242;

    static long records(double gigabytes) {
        return (long) Math.ceil(gigabytes * (1L << 30) / 100);
    }

    public static void main(String[] args) {
        if (args[0].equals("expect")) {
            expect(Double.parseDouble(args[1]));
            return;
        }
        String master = args[0];
        double gb = Double.parseDouble(args[1]);
        boolean replicate = Boolean.parseBoolean(args[2]);
        Workloads.Sum expected =
                args.length >= 5 ? new Workloads.Sum(Long.parseLong(args[3]), Long.parseLong(args[4])) : null;
        long records = records(gb);
        AtomicInteger stageReruns = new AtomicInteger();
        AtomicInteger taskFailures = new AtomicInteger();
        String verdict = "failed";
        String detail = "";
        double secs = 0;
        JavaSparkContext sc = null;
        try {
            SparkConf conf = Sessions.conf("estuary-chaos-replicate-" + replicate, master, "local[2,4]")
                    .set("spark.estuary.client.push.replicate", String.valueOf(replicate));
            sc = new JavaSparkContext(conf);
            sc.setLogLevel("WARN");
            sc.sc().addSparkListener(new SparkListener() {
                @Override
                public void onStageSubmitted(SparkListenerStageSubmitted e) {
                    if (e.stageInfo().attemptNumber() > 0) {
                        stageReruns.incrementAndGet();
                        System.out.println("STAGE_RERUN stage " + e.stageInfo().stageId() + " attempt "
                                + e.stageInfo().attemptNumber() + " ("
                                + e.stageInfo().name() + ")");
                    }
                }

                @Override
                public void onTaskEnd(SparkListenerTaskEnd e) {
                    if (e.reason() != Success$.MODULE$) taskFailures.incrementAndGet();
                }
            });
            JavaPairRDD<Long, byte[]> input = Workloads.records(sc, records, MAPS, SEED);
            if (expected == null) expected = Workloads.sum(input);
            System.out.println("JOB_START");
            System.out.flush();
            long t0 = System.nanoTime();
            Workloads.Sum got;
            try {
                got = Workloads.sortAndCheck(input, REDUCES);
            } finally {
                secs = (System.nanoTime() - t0) / 1e9;
            }
            verdict = got.equals(expected) ? "ok" : "wrong";
            detail = " got=" + got.count + "/" + got.sum + " expected=" + expected.count + "/" + expected.sum;
        } catch (Throwable t) {
            boolean unsorted = false;
            for (Throwable c = t; c != null; c = c.getCause()) {
                if (String.valueOf(c.getMessage()).contains("output not sorted")) unsorted = true;
            }
            verdict = unsorted ? "wrong" : "failed";
            String msg = String.valueOf(t.getMessage()).split("\n", 2)[0];
            detail = " error=" + t.getClass().getSimpleName() + ": " + msg;
            System.out.println("ERROR");
            t.printStackTrace(System.out);
        } finally {
            if (sc != null) {
                try {
                    sc.stop(); // drains the listener bus, so the counters below are complete
                } catch (Throwable t) {
                    System.out.println("stopping the Spark context failed: " + t);
                }
            }
        }
        System.out.println("STAGE_RERUNS " + stageReruns.get());
        System.out.printf(
                "RESULT %s seconds=%.2f reruns=%d taskFailures=%d%s%n",
                verdict, secs, stageReruns.get(), taskFailures.get(), detail);
        System.out.flush();
        System.exit(0);
    }

    /** The count and checksum the job must produce, from the generator alone. */
    static void expect(double gb) {
        JavaSparkContext sc = new JavaSparkContext(Sessions.conf("estuary-chaos-expected", null, "local[2]"));
        sc.setLogLevel("WARN");
        try {
            Workloads.Sum s = Workloads.sum(Workloads.records(sc, records(gb), MAPS, SEED));
            System.out.println("EXPECTED " + s.count + " " + s.sum);
        } finally {
            sc.stop();
        }
    }
}
