package org.apache.spark.sql.estuary;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Estuary's Spark SQL extensions: {@code spark.sql.extensions=org.apache.spark.sql.estuary.EstuarySqlExtensions}.
 * Adds {@link LocalLimitUnderGlobalLimit}, so that a limit never sends a whole table through the shuffle to one
 * reducer. Optional: Estuary shuffles correctly without it. Stateless.
 */
public final class EstuarySqlExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        extensions.injectOptimizerRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
            @Override
            public Rule<LogicalPlan> apply(SparkSession session) {
                return new LocalLimitUnderGlobalLimit();
            }
        });
        return BoxedUnit.UNIT;
    }
}
