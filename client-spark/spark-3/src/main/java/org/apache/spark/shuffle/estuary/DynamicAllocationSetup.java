package org.apache.spark.shuffle.estuary;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.api.ShuffleDriverComponents;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets Spark release idle executors without an external shuffle service, since their map outputs live in Estuary.
 *
 * <p>Spark 3.5+: the driver's shuffle manager is built (inside SparkEnv) from the very SparkConf that SparkContext
 * later reads to load the shuffle data I/O plugin and to validate dynamic allocation, so setting
 * {@code spark.shuffle.sort.io.plugin.class} to {@link EstuaryShuffleDataIO} from the manager's constructor is in
 * time; shuffle tracking is turned off unless the user set it, because Spark's executor monitor does not consult the
 * plugin and, with tracking on (the default from 3.4), keeps every executor that ran a map task while the shuffle
 * lives. Spark 3.3/3.4 know no reliable storage: there shuffle tracking is turned on, with a tracking timeout of 0
 * so executors that ran maps go once idle. Both are safe because Estuary's map statuses name a location no executor
 * owns, so removing an executor unregisters none of them. Settings the user made are kept; a combination that
 * cannot work fails here with a message saying what to set. Called once per driver, from the manager's
 * constructor; stateless.
 */
final class DynamicAllocationSetup {
    private static final Logger LOG = LoggerFactory.getLogger(DynamicAllocationSetup.class);

    static final String IO_PLUGIN = "spark.shuffle.sort.io.plugin.class";
    static final String SHUFFLE_SERVICE = "spark.shuffle.service.enabled";
    static final String TRACKING = "spark.dynamicAllocation.shuffleTracking.enabled";
    static final String TRACKING_TIMEOUT = "spark.dynamicAllocation.shuffleTracking.timeout";
    static final String DECOMMISSION = "spark.decommission.enabled";
    static final String DECOMMISSION_SHUFFLE = "spark.storage.decommission.shuffleBlocks.enabled";

    private DynamicAllocationSetup() {}

    /** True when this Spark asks the shuffle data I/O plugin whether map outputs outlive executors (3.5+). */
    static boolean sparkKnowsReliableStorage() {
        try {
            ShuffleDriverComponents.class.getMethod("supportsReliableStorage");
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /** Run on the driver before SparkContext loads the I/O plugin; may set {@link #IO_PLUGIN} in {@code conf}. */
    static void prepare(SparkConf conf) {
        prepare(conf, sparkKnowsReliableStorage(), dynamicAllocationEnabled(conf));
    }

    /** As Spark decides it: plain local mode ignores the setting unless testing (local-cluster does not). */
    static boolean dynamicAllocationEnabled(SparkConf conf) {
        String master = conf.get("spark.master", "");
        boolean localMode = master.equals("local") || master.startsWith("local[");
        return conf.getBoolean("spark.dynamicAllocation.enabled", false)
                && (!localMode || conf.getBoolean("spark.dynamicAllocation.testing", false));
    }

    static void prepare(SparkConf conf, boolean reliableStorageKnown, boolean dynamicAllocation) {
        if (!conf.contains(IO_PLUGIN)) conf.set(IO_PLUGIN, EstuaryShuffleDataIO.class.getName());
        if (!dynamicAllocation || conf.getBoolean(SHUFFLE_SERVICE, false)) return;
        boolean ourPlugin = EstuaryShuffleDataIO.class.getName().equals(conf.get(IO_PLUGIN));
        if (reliableStorageKnown && ourPlugin) {
            // Spark's executor monitor never asks the plugin: with tracking on (the default from 3.4) it would keep
            // every
            // executor that ran a map task for as long as the shuffle exists.
            if (!conf.contains(TRACKING)) conf.set(TRACKING, "false");
        } else if (!reliableStorageKnown && !conf.contains(TRACKING)) {
            conf.set(TRACKING, "true");
        }
        boolean tracking = conf.getBoolean(TRACKING, false);
        if (tracking && !reliableStorageKnown && !conf.contains(TRACKING_TIMEOUT)) {
            // Map outputs live in Estuary, so an executor that ran maps may go as soon as it is idle.
            conf.set(TRACKING_TIMEOUT, "0s");
        } else if (tracking && !conf.contains(TRACKING_TIMEOUT)) {
            LOG.warn(
                    "Dynamic allocation with " + TRACKING + "=true: an executor that ran map tasks is kept until their "
                            + "shuffle is cleaned up, although Estuary holds the output. Unset it or set "
                            + TRACKING_TIMEOUT + ".");
        }
        boolean decommission = conf.getBoolean(DECOMMISSION, false) && conf.getBoolean(DECOMMISSION_SHUFFLE, false);
        // With another plugin on 3.5+, Spark itself checks whether that plugin declares reliable storage.
        if (tracking || decommission || reliableStorageKnown) return;
        throw new IllegalArgumentException("Dynamic allocation with Estuary on Spark before 3.5 needs " + TRACKING
                + "=true (it is safe: Estuary keeps every map output, and no external shuffle service is needed); it was "
                + "set to false. From Spark 3.5 on Estuary declares reliable shuffle storage instead.");
    }
}
