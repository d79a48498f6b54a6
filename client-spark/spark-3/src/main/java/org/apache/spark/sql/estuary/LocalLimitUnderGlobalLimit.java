package org.apache.spark.sql.estuary;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.GlobalLimit;
import org.apache.spark.sql.catalyst.plans.logical.LocalLimit;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.Function1;
import scala.Option;
import scala.runtime.AbstractPartialFunction;

/**
 * Puts a {@code LocalLimit(n)} directly below every {@code GlobalLimit(n)} that lacks one. A global limit gathers
 * its input into one partition; without a local limit below it, every map sends all its rows through the shuffle
 * to that single reducer, only for all but n to be dropped there. With it, each map sends at most n rows. The
 * result is the same: the global limit keeps the first n rows of its input in partition order, and each
 * partition's first n rows hold all of those.
 *
 * <p>Left alone: a global limit over a local limit already, over an {@code Offset} (Spark pushes the limit below
 * the offset itself), or over a child with at most n rows per partition (Spark's {@code EliminateLimits} would drop
 * the local limit again, and the two rules would undo each other forever). Stateless.
 */
public final class LocalLimitUnderGlobalLimit extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
        return plan.transformUp(new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
            @Override
            public boolean isDefinedAt(LogicalPlan p) {
                return p instanceof GlobalLimit && lacksLocalLimit((GlobalLimit) p);
            }

            @Override
            public <A1 extends LogicalPlan, B1> B1 applyOrElse(A1 p, Function1<A1, B1> otherwise) {
                if (!isDefinedAt(p)) return otherwise.apply(p);
                GlobalLimit g = (GlobalLimit) p;
                @SuppressWarnings("unchecked")
                B1 out = (B1) g.copy(g.limitExpr(), new LocalLimit(g.limitExpr(), g.child()));
                return out;
            }
        });
    }

    static boolean lacksLocalLimit(GlobalLimit g) {
        LogicalPlan child = g.child();
        if (child instanceof LocalLimit || "Offset".equals(child.nodeName())) return false;
        Expression limit = g.limitExpr();
        if (limit.foldable()) {
            Object n = limit.eval(null);
            Option<Object> perPartition = child.maxRowsPerPartition();
            if (n instanceof Number
                    && perPartition.isDefined()
                    && ((Number) perPartition.get()).longValue() <= ((Number) n).longValue()) {
                return false;
            }
        }
        return true;
    }
}
