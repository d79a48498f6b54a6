package io.estuary.client;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.network.netty.RelocatedNettySetup;
import java.util.Base64;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an engine's shuffle plugin holds for the life of its process: the driver's {@link LifecycleManager} and the
 * tasks' {@link ShuffleClient}, each created on first use (an executor never creates a lifecycle manager, a driver
 * that runs no task never opens a client). Unregistering a shuffle and stopping go through here, so every engine
 * adapter forgets and closes them the same way. An engine whose plugins live as long as the process holds one
 * (Spark's shuffle manager); one whose plugins come and go with tasks shares the process's
 * ({@link io.estuary.client.engine.ProcessServices}) and leases the client ({@link #leaseClient()}). Thread-safe.
 */
public final class ShuffleServices {
    private static final Logger LOG = LoggerFactory.getLogger(ShuffleServices.class);

    private final EstuaryConf conf;
    private final Supplier<LifecycleManager> lifecycleFactory;
    private volatile LifecycleManager lifecycle;
    private volatile ShuffleClient client;
    /** Open leases of {@link #leaseClient()}; guarded by this. */
    private int clientLeases;

    /**
     * @param lifecycleFactory creates the driver's lifecycle manager, with whatever loss hooks the engine needs; called
     *     at most once
     */
    public ShuffleServices(EstuaryConf conf, Supplier<LifecycleManager> lifecycleFactory) {
        RelocatedNettySetup.apply(); // before the client's first connection or buffer (engines may call it earlier)
        this.conf = conf;
        this.lifecycleFactory = lifecycleFactory;
    }

    /** The driver's lifecycle manager, created on the first call. */
    public LifecycleManager lifecycle() {
        LifecycleManager lm = lifecycle;
        if (lm == null) {
            synchronized (this) {
                if (lifecycle == null) lifecycle = lifecycleFactory.get();
                lm = lifecycle;
            }
        }
        return lm;
    }

    /** The process's shuffle client, created on the first call. */
    public ShuffleClient client() {
        ShuffleClient c = client;
        if (c == null) {
            synchronized (this) {
                if (client == null) client = new ShuffleClient(clientConf());
                c = client;
            }
        }
        return c;
    }

    /**
     * The client's configuration: the process's, plus, when this process's lifecycle manager made its application's
     * secret itself (a driver that runs tasks, e.g. Spark local mode), that secret.
     */
    private EstuaryConf clientConf() {
        LifecycleManager lm = lifecycle;
        byte[] secret = lm == null ? null : lm.applicationSecret();
        if (secret == null || !conf.get(AuthConfig.APPLICATION_SECRET).isEmpty()) return conf;
        return conf.copy()
                .set(AuthConfig.APPLICATION_SECRET.key(), Base64.getEncoder().encodeToString(secret));
    }

    /**
     * The process's shuffle client for one task, created by the first open lease and closed when the last is given
     * back ({@link #returnClient}), so no connection or thread outlives the tasks. Not to be mixed with
     * {@link #client()}, whose client lives until {@link #close()}.
     */
    public synchronized ShuffleClient leaseClient() {
        clientLeases++;
        return client();
    }

    /** Gives back a lease of {@link #leaseClient()}; the last one closes the client. A stale client is ignored. */
    public synchronized void returnClient(ShuffleClient leased) {
        if (leased != client || clientLeases == 0) return;
        if (--clientLeases == 0) {
            client.close();
            client = null;
        }
    }

    /** Releases the shuffle on the driver (workers delete its files) and drops what the client cached of it. */
    public void unregisterShuffle(int shuffleId) {
        LifecycleManager lm = lifecycle;
        if (lm != null) lm.unregisterShuffle(shuffleId);
        ShuffleClient c = client;
        if (c != null) c.forgetShuffle(shuffleId);
    }

    /** Stops the lifecycle manager (a failure is logged, never thrown: the engine is stopping) and the client. */
    public void close() {
        LifecycleManager lm = lifecycle;
        if (lm != null) {
            try {
                lm.close();
            } catch (RuntimeException e) {
                LOG.warn("Stopping the Estuary lifecycle manager failed", e);
            }
        }
        ShuffleClient c = client;
        if (c != null) c.close();
    }
}
