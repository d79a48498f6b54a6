package io.estuary.testing.process;

/**
 * One master and some workers, each in its own JVM ({@link MasterProcesses#single()}, {@link WorkerProcesses}),
 * ready when the master knows every worker. For tests that need no master of their own in the test's JVM, e.g. those
 * whose class path holds an old Spark. Not thread-safe.
 */
public final class ProcessCluster implements AutoCloseable {
    private final MasterProcesses master;
    private final WorkerProcesses workers;

    public ProcessCluster(int numWorkers, String... workerSettings) throws Exception {
        this(numWorkers, 1, new String[0], workerSettings);
    }

    /** As above, each worker with {@code disksPerWorker} storage folders. */
    public ProcessCluster(int numWorkers, int disksPerWorker, String... workerSettings) throws Exception {
        this(numWorkers, disksPerWorker, new String[0], workerSettings);
    }

    /** One master with {@code settings} and {@code numWorkers} workers with the same settings. */
    public static ProcessCluster withSettings(int numWorkers, String... settings) throws Exception {
        return new ProcessCluster(numWorkers, 1, settings, settings);
    }

    private ProcessCluster(int numWorkers, int disksPerWorker, String[] masterSettings, String[] workerSettings)
            throws Exception {
        MasterProcesses m = MasterProcesses.single(masterSettings);
        WorkerProcesses w = null;
        try {
            w = new WorkerProcesses(numWorkers, disksPerWorker, m.endpoints(), workerSettings);
            w.awaitRegistered(() -> registered(m), 90_000);
        } catch (Exception | Error e) {
            try {
                if (w != null) w.close();
            } finally {
                m.close();
            }
            throw e;
        }
        master = m;
        workers = w;
    }

    /** Workers the master knows; fails at once, with its log, when the master died. */
    private static int registered(MasterProcesses m) {
        if (m.process(0) != null && !m.process(0).isAlive()) {
            String log;
            try {
                log = m.log(0);
            } catch (java.io.IOException e) {
                log = "(unreadable: " + e + ")";
            }
            throw new IllegalStateException("the master exited; its log:\n" + log);
        }
        return m.registeredWorkers(0);
    }

    public String masterEndpoint() {
        return master.endpoints();
    }

    public MasterProcesses master() {
        return master;
    }

    public WorkerProcesses workers() {
        return workers;
    }

    @Override
    public void close() throws Exception {
        try {
            workers.close();
        } finally {
            master.close();
        }
    }
}
