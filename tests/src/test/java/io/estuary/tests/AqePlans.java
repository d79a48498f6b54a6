package io.estuary.tests;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AQEShuffleReadExec;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import scala.collection.JavaConverters;

/** What AQE made of an executed query: its shuffle reads (coalesced, skew-split or local). */
public final class AqePlans {
    private AqePlans() {}

    /** Every AQE shuffle read in the final plan of {@code ds}, which must have run. */
    public static List<AQEShuffleReadExec> shuffleReads(Dataset<?> ds) {
        List<AQEShuffleReadExec> out = new ArrayList<>();
        collect(ds.queryExecution().executedPlan(), out);
        return out;
    }

    private static void collect(SparkPlan plan, List<AQEShuffleReadExec> out) {
        if (plan instanceof AdaptiveSparkPlanExec) {
            collect(((AdaptiveSparkPlanExec) plan).executedPlan(), out);
            return;
        }
        if (plan instanceof QueryStageExec) {
            collect(((QueryStageExec) plan).plan(), out);
            return;
        }
        if (plan instanceof AQEShuffleReadExec) out.add((AQEShuffleReadExec) plan);
        for (SparkPlan child : JavaConverters.seqAsJavaList(plan.children())) collect(child, out);
    }

    /** Fails unless some shuffle read of {@code ds} is of the kind {@code test} accepts. */
    public static void require(Dataset<?> ds, String what, java.util.function.Predicate<AQEShuffleReadExec> test) {
        for (AQEShuffleReadExec r : shuffleReads(ds)) {
            if (test.test(r)) return;
        }
        throw new IllegalStateException("AQE planned no " + what + "; the test would prove nothing:\n"
                + ds.queryExecution().executedPlan());
    }
}
