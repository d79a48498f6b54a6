package io.estuary.worker;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.util.FatalErrors;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker process ({@link Worker#main}): starts a worker from the server configuration, stops it gracefully on
 * SIGTERM (the shutdown hook), and exits once a decommission has drained it. Runs on the main thread, which it
 * holds until the worker stopped.
 */
final class WorkerMain {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

    private WorkerMain() {}

    static void run() throws Exception {
        EstuaryConf conf = EstuaryConf.forServer();
        if (conf.get(NetworkConfig.HALT_ON_FATAL_ERROR)) FatalErrors.haltOnFatalError();
        Worker worker = new Worker(conf);
        LOG.info("Estuary worker started: {}", worker.address().toString().replace('\n', ' '));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            LOG.info("Estuary worker stopping");
                            worker.stopGracefully();
                            LOG.info("Estuary worker stopped");
                            stopped.countDown();
                        },
                        "worker-shutdown"));
        // A finished decommission exits the process (which runs the hook). Not from the thread that completes the
        // drain: the hook needs the heartbeat thread.
        worker.drained().thenRun(() -> new Thread(() -> System.exit(0), "worker-exit").start());
        stopped.await();
    }
}
