package io.estuary.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.master.state.WorkerId;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Applications select workers by tag expression (estuary.client.tags) over the tags workers declare
 * (estuary.worker.tags), through a real master and four workers on loopback: two teams' applications on disjoint tags
 * never share a worker, replicas included, and read back exact; a canary tag keeps the ones that exclude it off that
 * worker; an expression no worker matches fails the shuffle naming it; a malformed one fails the driver's start.
 */
class WorkerTagsTest {
    private static EstuaryConf tagged(String tags) {
        return new EstuaryConf().set(WorkerConfig.TAGS.key(), tags);
    }

    /** Writes and reads back one shuffle of {@code lm}'s; asserts it exact; returns the workers that held a copy. */
    private static Set<String> job(MiniCluster cluster, EstuaryConf conf, LifecycleManager lm, int shuffle)
            throws Exception {
        EstuaryConf executor = conf.copy()
                .set(AuthConfig.APPLICATION_SECRET.key(), Base64.getEncoder().encodeToString(lm.applicationSecret()));
        try (ShuffleClient client = new ShuffleClient(executor)) {
            ShuffleSpec spec = new ShuffleSpec(lm.appId(), shuffle, 3, 8, "127.0.0.1", lm.port());
            long count = 0;
            long sum = 0;
            for (int m = 0; m < spec.numMappers; m++) {
                MapOutputWriter w = client.openWriter(spec, m, 0);
                for (int i = 0; i < 3000; i++) {
                    byte[] rec = FramedRecords.framed(shuffle * 7 + m, i, 16 + i % 100);
                    w.write(Math.floorMod(i * 5 + m, spec.numPartitions), rec, 0, rec.length);
                    count++;
                    sum += FramedRecords.hash(rec);
                }
                w.finish();
            }
            long[] got = FramedRecords.readAll(client, spec, 0, spec.numPartitions);
            assertEquals(count, got[0], "records read back");
            assertEquals(sum, got[1], "checksum of the records read back");
            // The master learns a shuffle placed by a lease in the background.
            io.estuary.testing.Waits.waitFor(
                    () -> cluster.master().state(s -> s.shuffles(lm.appId()).containsKey(shuffle)),
                    30_000,
                    "shuffle " + shuffle + " of " + lm.appId() + " recorded");
            Map<Integer, List<PartitionLocation>> placed = cluster.master().state(s -> s.shuffles(lm.appId()));
            Set<String> held = new TreeSet<>();
            for (PartitionLocation l : placed.get(shuffle)) {
                held.add(WorkerId.of(l.getWorker()));
                if (l.hasPeer()) held.add(WorkerId.of(l.getPeer().getWorker()));
            }
            return held;
        }
    }

    @Test
    void teamsOnDisjointTagsNeverShareAWorkerAndAnUnmatchedExpressionFailsByName() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 0, 1, new EstuaryConf())) {
            Worker a1 = cluster.addWorker(tagged("team=a"));
            Worker a2 = cluster.addWorker(tagged("team=a,ssd"));
            Worker b1 = cluster.addWorker(tagged("team=b"));
            Worker b2 = cluster.addWorker(tagged("team=b,release=canary"));
            Set<String> teamA = new HashSet<>();
            teamA.add(WorkerId.of(a1.address()));
            teamA.add(WorkerId.of(a2.address()));
            EstuaryConf base = cluster.clientConf().set(ClientConfig.PUSH_REPLICATE.key(), "true");

            EstuaryConf confA = base.copy().set(ClientConfig.TAGS.key(), "team=a");
            EstuaryConf confB = base.copy()
                    .set(ClientConfig.TAGS.key(), "team in {b, c} & !release=canary")
                    .set(ClientConfig.PUSH_REPLICATE.key(), "false");
            EstuaryConf confNone = base.copy().set(ClientConfig.TAGS.key(), "team=c");
            LifecycleManager a = new LifecycleManager("app-team-a", confA, "127.0.0.1");
            LifecycleManager b = new LifecycleManager("app-team-b", confB, "127.0.0.1");
            LifecycleManager none = new LifecycleManager("app-team-c", confNone, "127.0.0.1");
            try {
                for (int shuffle = 0; shuffle < 3; shuffle++) {
                    Set<String> heldA = job(cluster, confA, a, shuffle);
                    assertEquals(
                            teamA, heldA, "team a's shuffle " + shuffle + " (replicated) on both team-a workers only");
                    Set<String> heldB = job(cluster, confB, b, shuffle);
                    assertEquals(
                            java.util.Collections.singleton(WorkerId.of(b1.address())),
                            heldB,
                            "team b's shuffle " + shuffle + " off the canary");
                }
                Exception e = assertThrows(Exception.class, () -> job(cluster, confNone, none, 0));
                StringBuilder chain = new StringBuilder();
                for (Throwable t = e; t != null; t = t.getCause())
                    chain.append(t).append(" / ");
                String message = chain.toString();
                assertTrue(message.contains("no active worker matches tag expression 'team=c'"), message);
                assertTrue(message.contains("team=b x2"), message);
            } finally {
                a.close();
                b.close();
                none.close();
            }
            // A malformed expression: the driver does not start, and says where.
            Exception bad = assertThrows(
                    Exception.class,
                    () -> new LifecycleManager(
                            "app-bad", base.copy().set(ClientConfig.TAGS.key(), "team=a &"), "127.0.0.1"));
            assertTrue(String.valueOf(bad.getMessage()).contains("column 9"), String.valueOf(bad.getMessage()));
        }
    }
}
