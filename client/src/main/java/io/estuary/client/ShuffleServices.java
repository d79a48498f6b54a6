package io.estuary.client;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.common.config.EstuaryConf;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an engine's shuffle plugin holds for the life of its process: the driver's {@link LifecycleManager} and the
 * tasks' {@link ShuffleClient}, each created on first use (an executor never creates a lifecycle manager, a driver
 * that runs no task never opens a client). Unregistering a shuffle and stopping go through here, so every engine
 * adapter forgets and closes them the same way. Thread-safe.
 */
public final class ShuffleServices {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleServices.class);

  private final EstuaryConf conf;
  private final Supplier<LifecycleManager> lifecycleFactory;
  private volatile LifecycleManager lifecycle;
  private volatile ShuffleClient client;

  /**
   * @param lifecycleFactory creates the driver's lifecycle manager, with whatever loss hooks the engine needs; called
   *     at most once
   */
  public ShuffleServices(EstuaryConf conf, Supplier<LifecycleManager> lifecycleFactory) {
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
        if (client == null) client = new ShuffleClient(conf);
        c = client;
      }
    }
    return c;
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
