package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.ShuffleClient;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.LocationTable;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.testing.process.WorkerProcesses;
import io.estuary.worker.MiniCluster;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A worker stopped with SIGSTOP (its own JVM: connections open, nothing answered). While the driver commits
 * shuffles that have copies on it, each commit waits for it, up to its timeout; meanwhile the driver must go on
 * registering other shuffles and answering revives (commits have their own threads), and a reducer asking where its
 * partitions are must wait for the commit instead of timing out before it (its wait agrees with the commit timeout).
 * While maps push, a live primary whose replica is the stopped worker answers its writers once its forward times
 * out, before they stop waiting, so no writer blames it.
 */
class StoppedWorkerCommitTest {
    /** More shuffles committing at once than the driver's 8 threads for everything else. */
    private static final int SHUFFLES = 10;

    private static final int PARTITIONS = 6;
    private static final int RECORDS = 600;

    @Test
    void commitsWaitingOnAStoppedWorkerStarveNothingAndReducersWaitForThem() throws Exception {
        try (MiniCluster master = new MiniCluster(0, 1, new EstuaryConf());
                WorkerProcesses workers =
                        new WorkerProcesses(3, master.masterEndpoint(), "estuary.network.rpc.timeout=10s")) {
            workers.awaitRegistered(() -> master.master().state(s -> s.workers().size()));
            // Asks of the stopped worker go unanswered for 10 s each; the driver keeps asking it to commit for 30 s
            // more,
            // so every commit lasts about 40 s.
            EstuaryConf conf = master.clientConf()
                    .set(NetworkConfig.RPC_TIMEOUT, "10s")
                    .set(ClientConfig.COMMIT_TIMEOUT, "60s")
                    .set(ClientConfig.COMMIT_UNREACHABLE_TIMEOUT, "30s")
                    .set(ClientConfig.PUSH_RETRY_WAIT, "100ms");
            LifecycleManager driver = new LifecycleManager("app-stopped-" + System.nanoTime(), conf, "127.0.0.1");
            ShuffleClient client = new ShuffleClient(conf);
            ExecutorService tasks = Executors.newFixedThreadPool(SHUFFLES);
            long victim = workers.process(0).pid();
            try {
                List<ShuffleSpec> specs = new ArrayList<>();
                List<MapOutputWriter> maps = new ArrayList<>();
                long[][] expected = new long[SHUFFLES][2];
                for (int s = 0; s < SHUFFLES; s++) {
                    ShuffleSpec spec = new ShuffleSpec(driver.appId(), s, 1, PARTITIONS, "127.0.0.1", driver.port());
                    LocationTable t = client.register(spec, 0, false); // every worker holds copies of every shuffle
                    List<Integer> elsewhere = partitionsAvoiding(t, workers.rpcPort(0));
                    assertTrue(elsewhere.size() < PARTITIONS, "the victim should hold copies of " + spec);
                    assertFalse(
                            elsewhere.isEmpty(), "some partition of " + spec + " should have no copy on the victim");
                    MapOutputWriter w = new MapOutputWriter(client, spec, 0, 0);
                    for (int i = 0; i < RECORDS; i++) {
                        // Only into partitions with no copy on the victim: the maps end at once, and every commit still
                        // asks
                        // the victim for the (empty) copies it holds.
                        byte[] r = record(s, i);
                        w.write(elsewhere.get(i % elsewhere.size()), r, 0, r.length);
                        expected[s][0]++;
                        expected[s][1] += hash(r);
                    }
                    specs.add(spec);
                    maps.add(w);
                }
                signal("STOP", victim);
                // The maps end, and each shuffle commits.
                List<Future<?>> ended = new ArrayList<>();
                for (MapOutputWriter w : maps) ended.add(tasks.submit(() -> w.finish()));
                for (Future<?> f : ended) f.get(120, TimeUnit.SECONDS);
                long committedBefore = driver.commitsFinished();

                // While every commit waits for the stopped worker, a new shuffle registers and one of its partitions is
                // revived: neither may wait for a commit to end.
                ShuffleSpec fresh =
                        new ShuffleSpec(driver.appId(), SHUFFLES, 1, PARTITIONS, "127.0.0.1", driver.port());
                LocationTable t = client.register(fresh, 0, false);
                PartitionLocation moved = client.revive(fresh, t, 0, t.get(0).getEpoch(), null, false)
                        .get(60, TimeUnit.SECONDS);
                long committedAfter = driver.commitsFinished();
                assertEquals(1, moved.getEpoch(), "partition 0 of the fresh shuffle moved to its next epoch");
                assertEquals(0, committedBefore, "a commit ended before the maps did: the worker did not hold it up");
                assertEquals(0, committedAfter, "the registration and the revive waited until a commit had ended");

                // Reducers ask at once: they wait for the commits (about 40 s), longer than a request's 10 s timeout.
                List<Future<long[]>> reads = new ArrayList<>();
                for (ShuffleSpec spec : specs) reads.add(tasks.submit(() -> readAll(client, spec)));
                for (int s = 0; s < SHUFFLES; s++) {
                    long[] got = reads.get(s).get(180, TimeUnit.SECONDS);
                    assertEquals(expected[s][0], got[0], "records of shuffle " + s);
                    assertEquals(expected[s][1], got[1], "checksum of shuffle " + s);
                }
                assertEquals(SHUFFLES, driver.commitsFinished());
            } finally {
                signal("CONT", victim);
                tasks.shutdownNow();
                client.close();
                driver.close();
            }
        }
    }

    @Test
    void aStoppedReplicaGetsNoLivePrimaryBlamed() throws Exception {
        // One report excludes a worker: a writer that blamed a live primary would show in the master's view.
        EstuaryConf strict =
                new EstuaryConf().set(io.estuary.common.config.MasterConfig.WORKER_FAILURE_EXCLUDE_THRESHOLD, "1");
        try (MiniCluster master = new MiniCluster(0, 1, strict);
                WorkerProcesses workers =
                        new WorkerProcesses(3, master.masterEndpoint(), "estuary.network.rpc.timeout=10s")) {
            workers.awaitRegistered(() -> master.master().state(s -> s.workers().size()));
            // The commit gives the stopped worker up after one unanswered ask.
            EstuaryConf conf = master.clientConf()
                    .set(NetworkConfig.RPC_TIMEOUT, "10s")
                    .set(ClientConfig.COMMIT_UNREACHABLE_TIMEOUT, "0s")
                    .set(ClientConfig.PUSH_RETRY_WAIT, "100ms");
            LifecycleManager driver =
                    new LifecycleManager("app-stopped-replica-" + System.nanoTime(), conf, "127.0.0.1");
            ShuffleClient client = new ShuffleClient(conf);
            ExecutorService tasks = Executors.newFixedThreadPool(SHUFFLES);
            long victim = workers.process(0).pid();
            try {
                List<ShuffleSpec> specs = new ArrayList<>();
                List<MapOutputWriter> maps = new ArrayList<>();
                long[][] expected = new long[SHUFFLES][2];
                for (int s = 0; s < SHUFFLES; s++) {
                    ShuffleSpec spec = new ShuffleSpec(driver.appId(), s, 1, PARTITIONS, "127.0.0.1", driver.port());
                    LocationTable t = client.register(spec, 0, false);
                    List<Integer> replicatedToVictim = new ArrayList<>();
                    for (int p = 0; p < PARTITIONS; p++) {
                        PartitionLocation l = t.get(p);
                        if (l.getWorker().getRpcPort() != workers.rpcPort(0)
                                && l.hasPeer()
                                && l.getPeer().getWorker().getRpcPort() == workers.rpcPort(0)) {
                            replicatedToVictim.add(p);
                        }
                    }
                    assertFalse(
                            replicatedToVictim.isEmpty(),
                            "some partition of " + spec + " should be replicated to the victim");
                    MapOutputWriter w = new MapOutputWriter(client, spec, 0, 0);
                    for (int i = 0;
                            i < RECORDS;
                            i++) { // only into partitions whose live primary forwards to the victim
                        byte[] r = record(s, i);
                        w.write(replicatedToVictim.get(i % replicatedToVictim.size()), r, 0, r.length);
                        expected[s][0]++;
                        expected[s][1] += hash(r);
                    }
                    specs.add(spec);
                    maps.add(w);
                }
                signal("STOP", victim);
                List<Future<?>> ended = new ArrayList<>();
                for (MapOutputWriter w : maps) ended.add(tasks.submit(() -> w.finish()));
                for (Future<?> f : ended) f.get(180, TimeUnit.SECONDS);
                for (int i = 1; i < 3; i++) {
                    String id = workers.workerId(i);
                    assertEquals(
                            io.estuary.common.protocol.WorkerState.WORKER_ACTIVE,
                            master.master().state(st -> st.workerState(id)),
                            "live worker " + id + " was blamed and excluded");
                }
                for (int s = 0; s < SHUFFLES; s++) {
                    long[] got = readAll(client, specs.get(s));
                    assertEquals(expected[s][0], got[0], "records of shuffle " + s);
                    assertEquals(expected[s][1], got[1], "checksum of shuffle " + s);
                }
            } finally {
                signal("CONT", victim);
                tasks.shutdownNow();
                client.close();
                driver.close();
            }
        }
    }

    /** The partitions none of whose copies is on the worker with {@code rpcPort}. */
    private static List<Integer> partitionsAvoiding(LocationTable t, int rpcPort) {
        List<Integer> out = new ArrayList<>();
        for (int p = 0; p < t.numPartitions(); p++) {
            PartitionLocation l = t.get(p);
            if (l.getWorker().getRpcPort() != rpcPort
                    && !(l.hasPeer() && l.getPeer().getWorker().getRpcPort() == rpcPort)) {
                out.add(p);
            }
        }
        return out;
    }

    private static void signal(String signal, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                .inheritIO()
                .start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " " + pid);
    }

    /** A 4-byte length and that many seeded random bytes, so a reader can split batches into records. */
    private static byte[] record(int shuffle, int i) {
        byte[] r = new byte[60 + i % 40];
        new Random(shuffle * 1_000_003L + i).nextBytes(r);
        return ByteBuffer.allocate(4 + r.length).putInt(r.length).put(r).array();
    }

    private static long hash(byte[] record) {
        return java.util.Arrays.hashCode(record) * 0x9E3779B97F4A7C15L;
    }

    private static long[] readAll(ShuffleClient client, ShuffleSpec spec) throws Exception {
        long count = 0;
        long sum = 0;
        try (ShuffleBatchReader r = new ShuffleBatchReader(client, spec, 0, spec.numPartitions, 0, spec.numMappers)) {
            ByteBuf b;
            while ((b = r.next()) != null) {
                while (b.isReadable()) {
                    byte[] rec = new byte[4 + b.getInt(b.readerIndex())];
                    b.readBytes(rec);
                    count++;
                    sum += hash(rec);
                }
            }
        }
        return new long[] {count, sum};
    }
}
