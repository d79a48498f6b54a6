package io.estuary.tests;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.ShuffleClient;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.master.state.WorkerId;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminViews;
import io.estuary.worker.MiniCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Quotas and worker tags end to end (issue 19), on three Raft masters and three workers on loopback with authentication and replicas
 * on, set and changed only through {@code bin/estuary} (run in-process): a Spark job of a user over its bytes quota
 * fails with the quota's message (never a silent fall-back); raised through the CLI, the same job runs exact against
 * native without any restart; the quota survives a change of leader, where lowering it refuses again; a user whose
 * quota says wait has its job wait while another application of it holds the only shuffle allowed, and admitted the
 * moment that application ends, exact; operators tag workers and hold a user to a default expression, which the
 * user can narrow but not widen, and both outlive a change of leader.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TenancySparkTest {
    private static final String ADMIN_TOKEN =
            io.estuary.testing.ClusterSecrets.adminToken(io.estuary.testing.ClusterSecrets.shared());
    private MiniCluster cluster;
    private String masters;
    private Path tokenFile;
    private Checksum expected;

    @BeforeAll
    void start() throws Exception {
        SparkSession n = SparkSessions.start(SparkSessions.base("local[2]", "native"));
        try {
            expected = job(n);
        } finally {
            n.stop();
        }
        cluster = new MiniCluster(3, 3, 1, new EstuaryConf().set(MasterConfig.HA_ELECTION_TIMEOUT, "1500ms"));
        List<String> http = new ArrayList<>();
        for (int i = 0; i < 3; i++) http.add("127.0.0.1:" + cluster.master(i).httpPort());
        masters = String.join(",", http);
        // Quotas are logged in Raft log format 2: the leader sets one once it has heard every master applies it.
        for (int i = 0; i < 3; i++) {
            int m = i;
            waitFor(() -> cluster.master(m).log().groupLogFormat() >= 2, 60_000, "m" + m + " knows the group's format");
        }
        tokenFile = Files.createTempFile("estuary-admin", ".token");
        Files.setPosixFilePermissions(tokenFile, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Files.write(tokenFile, ADMIN_TOKEN.getBytes(StandardCharsets.US_ASCII));
    }

    @AfterAll
    void stop() throws Exception {
        if (cluster != null) cluster.close();
        if (tokenFile != null) Files.deleteIfExists(tokenFile);
    }

    private static Checksum job(SparkSession s) {
        return ShuffleJobs.reduceByKey(s);
    }

    /** Runs {@link #job} as {@code user} on the cluster, replicated; returns its checksum. */
    private Checksum sparkJobAs(String user) {
        SparkConf conf = SparkSessions.estuary(
                        SparkSessions.base("local[2]", "quota-" + user), cluster.masterEndpoint())
                .set("spark.estuary.client.user", user)
                .set("spark.estuary.client.push.replicate", "true");
        SparkSession s = SparkSessions.start(conf);
        try {
            return job(s);
        } finally {
            s.stop();
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
        }
    }

    @Test
    void aUserOverItsBytesQuotaIsRefusedUntilTheCliRaisesItAndTheQuotaOutlivesTheLeader() throws Exception {
        // alice's first application holds about 600 KB on the workers (its shuffle stays until it ends).
        try (Holder first = new Holder("alice-holder", "alice")) {
            first.writeShuffle(0);
            CliRun set = cli("quota", "set", "user", "alice", "bytes=64k");
            assertEquals(0, set.code, set.err);
            assertTrue(set.out.contains("quota of user alice is now bytes=65536"), set.out);
            waitFor(() -> reached("user", "alice").contains("bytes"), 30_000, "the workers report alice's bytes");

            Throwable refused = assertThrows(Throwable.class, () -> sparkJobAs("alice"));
            String chain = chain(refused);
            assertTrue(chain.contains("user alice is over its quota of 64.0 KiB held on workers"), chain);
            assertTrue(chain.contains("(see `estuary quota`)"), chain);
            assertTrue(
                    cluster.master(cluster.awaitLeader()).metrics().quotaRefusals("user", "alice", "bytes", false) > 0,
                    "the refusal is counted");

            // Raised through the CLI: the same job runs now, exact, with no restart of anything.
            assertEquals(0, cli("quota", "set", "user", "alice", "bytes=1g", "shuffles=50").code);
            assertEquals(expected, sparkJobAs("alice"), "alice's job with room in her quota");

            // Every master agrees, and a new leader keeps the quota: lowering it there refuses again.
            int leader = cluster.awaitLeader();
            int next = (leader + 1) % 3;
            assertEquals(0, cli("transfer-leadership", "m" + next).code);
            waitFor(() -> cluster.awaitLeader() == next, 30_000, "m" + next + " leads");
            for (int i = 0; i < 3; i++) {
                int m = i;
                waitFor(
                        () -> cluster.master(m)
                                        .state(st ->
                                                st.quota(io.estuary.master.protocol.QuotaScope.QUOTA_USER, "alice"))
                                != null,
                        10_000,
                        "master m" + m + " applied alice's quota");
            }
            CliRun list = cli("quota");
            assertEquals(0, list.code, list.err);
            assertTrue(list.out.matches("(?s).*user +alice +operator +bytes=1073741824,shuffles=50.*"), list.out);
            assertEquals(0, cli("quota", "set", "user", "alice", "bytes=64k").code);
            waitFor(() -> reached("user", "alice").contains("bytes"), 30_000, "the new leader hears alice's bytes");
            assertTrue(chain(assertThrows(Throwable.class, () -> sparkJobAs("alice")))
                    .contains("user alice is over its quota of 64.0 KiB"));
        }
        // alice's holder ended: her bytes are gone with it, and the quota admits her again.
        waitFor(() -> reached("user", "alice").isEmpty(), 30_000, "alice's bytes gone");
        assertEquals(expected, sparkJobAs("alice"));
        CliRun removed = cli("quota", "remove", "user", "alice");
        assertEquals(0, removed.code, removed.err);
        assertTrue(removed.out.contains("the default applies: no limit"), removed.out);
        // Changes need the admin token: without it the leader refuses before anything is logged.
        CliRun anonymous = CliRun.logged("--master", masters, "quota", "set", "user", "alice", "bytes=1");
        assertEquals(1, anonymous.code, anonymous.out + anonymous.err);
        assertTrue(anonymous.err.contains("requires an admin token"), anonymous.err);
        CliRun anonymousTags = CliRun.logged("--master", masters, "tags", "default", "user", "alice", "team=x");
        assertEquals(1, anonymousTags.code, anonymousTags.out + anonymousTags.err);
        boolean none = cluster.master(cluster.awaitLeader())
                .state(st -> st.quota(io.estuary.master.protocol.QuotaScope.QUOTA_USER, "alice") == null
                        && st.defaultTagSets().isEmpty());
        assertTrue(none, "nothing was set without the token");
        CliRun bad = cli("quota", "set", "user", "alice", "bytes=lots");
        assertEquals(1, bad.code);
        assertTrue(bad.err.contains("quota: bytes: 'lots' is not a valid byte size"), bad.err);
    }

    @Test
    void aJobOverAWaitingQuotaWaitsForRoomAndRunsOnceAnotherApplicationEnds() throws Exception {
        assertEquals(0, cli("quota", "set", "user", "bob", "shuffles=1", "policy=wait", "maxWait=3min").code);
        Holder holder = new Holder("bob-holder", "bob");
        try {
            holder.writeShuffle(0);
            CompletableFuture<Checksum> waiting = CompletableFuture.supplyAsync(() -> sparkJobAs("bob"));
            io.estuary.master.Master[] leader = {null};
            waitFor(
                    () -> {
                        leader[0] = cluster.master(cluster.awaitLeader());
                        return leader[0].metrics().quotaRefusals("user", "bob", "shuffles", true) >= 3;
                    },
                    60_000,
                    "bob's job told to wait several times");
            assertFalse(waiting.isDone(), "bob's job waits while his other application holds his only shuffle");
            holder.close();
            holder = null;
            assertEquals(expected, waiting.get(3, TimeUnit.MINUTES), "bob's job, admitted once room was made");
        } finally {
            if (holder != null) holder.close();
            cli("quota", "remove", "user", "bob");
        }
    }

    @Test
    void operatorsTagWorkersAndHoldAUserToADefaultThatOutlivesTheLeader() throws Exception {
        String w0 = WorkerId.of(cluster.workers().get(0).address());
        String w1 = WorkerId.of(cluster.workers().get(1).address());
        String w2 = WorkerId.of(cluster.workers().get(2).address());
        assertEquals(0, cli("tags", "add", w0, "team=a", "ssd").code);
        assertEquals(0, cli("tags", "add", w1, "team=a").code);
        CliRun held = cli("tags", "default", "user", "erin", "team=a");
        assertEquals(0, held.code, held.err);
        assertTrue(held.out.contains("applications of user erin are held to 'team=a'"), held.out);
        assertEquals(expected, sparkJobAs("erin"), "erin's job on her team's workers");
        try (Holder erin = new Holder("erin-a", "erin")) {
            erin.writeShuffle(0);
            assertEquals(new TreeSet<>(Arrays.asList(w0, w1)), workersOf(erin, 0), "every copy on team=a workers");
        }
        // Her own expression narrows the default, never widens it.
        try (Holder widen = new Holder("erin-widen", "erin", "!team=a")) {
            String chain = chain(assertThrows(Throwable.class, () -> widen.writeShuffle(0)));
            assertTrue(chain.contains("no active worker matches tag expression"), chain);
            assertTrue(chain.contains("(estuary.client.tags and the default of user erin)"), chain);
        }
        try (Holder narrow = new Holder("erin-ssd", "erin", "ssd")) {
            narrow.writeShuffle(0);
            assertEquals(Collections.singleton(w0), workersOf(narrow, 0), "team=a and ssd: only the first");
        }
        // Removed at run time, a tag stops matching; across a change of leader the masters keep the operators' word.
        assertEquals(0, cli("tags", "remove", w0, "team=a").code);
        int next = (cluster.awaitLeader() + 1) % 3;
        assertEquals(0, cli("transfer-leadership", "m" + next).code);
        waitFor(() -> cluster.awaitLeader() == next, 30_000, "m" + next + " leads");
        try (Holder erin = new Holder("erin-b", "erin")) {
            erin.writeShuffle(0);
            assertEquals(Collections.singleton(w1), workersOf(erin, 0), "team=a now only on the second worker");
        }
        AdminViews.Tags tags = AdminJson.read(cli("--json", "tags").out, AdminViews.Tags.class);
        for (AdminViews.WorkerTagsEntry w : tags.workers()) {
            if (w.worker().equals(w0)) {
                assertEquals(Arrays.asList("ssd"), w.added(), "removing the tag an operator added undid the addition");
                assertTrue(w.removed().isEmpty(), w.toString());
                assertEquals(Arrays.asList("ssd"), w.tags());
            } else if (w.worker().equals(w1)) {
                assertEquals(Arrays.asList("team=a"), w.added());
            } else {
                assertEquals(w2, w.worker());
                assertTrue(w.added().isEmpty() && w.removed().isEmpty(), w.toString());
            }
        }
        assertEquals(1, tags.defaults().size());
        assertEquals("team=a", tags.defaults().get(0).expression());
        CliRun bad = cli("tags", "default", "user", "erin", "team=a &");
        assertEquals(1, bad.code);
        assertTrue(bad.err.contains("column 9"), bad.err);
        assertEquals(0, cli("tags", "default", "user", "erin").code);
        assertEquals(0, cli("tags", "remove", w1, "team=a").code);
        assertEquals(0, cli("tags", "remove", w0, "ssd").code);
    }

    /** The workers holding a copy of {@code holder}'s shuffle, once the master recorded its placement. */
    private Set<String> workersOf(Holder holder, int shuffle) throws InterruptedException {
        String app = holder.lm.appId();
        waitFor(
                () -> cluster.master(cluster.awaitLeader())
                        .state(s -> s.shuffles(app).containsKey(shuffle)),
                30_000,
                "shuffle " + shuffle + " of " + app + " recorded");
        List<PartitionLocation> locs =
                cluster.master(cluster.awaitLeader()).state(s -> s.shuffles(app).get(shuffle));
        Set<String> out = new TreeSet<>();
        for (PartitionLocation l : locs) {
            out.add(WorkerId.of(l.getWorker()));
            if (l.hasPeer()) out.add(WorkerId.of(l.getPeer().getWorker()));
        }
        return out;
    }

    /** The limits a scope is at or over, as {@code GET /api/quotas} on the leader says. */
    private List<String> reached(String scope, String name) {
        AdminViews.Quotas qs = AdminJson.read(cli("--json", "quota").out, AdminViews.Quotas.class);
        for (AdminViews.QuotaEntry e : qs.quotas()) {
            if (e.scope().equals(scope) && e.name().equals(name)) return e.reached();
        }
        return new ArrayList<>();
    }

    private static String chain(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) b.append(c).append(" / ");
        return b.toString();
    }

    /** An application of {@code user} through the engine-neutral client, holding shuffles until it is closed. */
    private final class Holder implements AutoCloseable {
        final LifecycleManager lm;
        final EstuaryConf conf;

        Holder(String app, String user) throws Exception {
            this(app, user, "");
        }

        Holder(String app, String user, String tags) throws Exception {
            EstuaryConf c = cluster.clientConf()
                    .set(ClientConfig.USER.key(), user)
                    .set(ClientConfig.TAGS.key(), tags)
                    .set(ClientConfig.PUSH_REPLICATE.key(), "true");
            lm = new LifecycleManager(app, c, "127.0.0.1");
            conf = c.copy()
                    .set(
                            AuthConfig.APPLICATION_SECRET.key(),
                            Base64.getEncoder().encodeToString(lm.applicationSecret()));
        }

        /**
         * Writes a shuffle of 3,000 records of 100 random bytes (incompressible: held as written) and reads it back,
         * asserting the count and an order-independent checksum; the shuffle stays held until the application ends.
         */
        void writeShuffle(int shuffle) throws Exception {
            try (ShuffleClient client = new ShuffleClient(conf)) {
                ShuffleSpec spec = new ShuffleSpec(lm.appId(), shuffle, 2, 4, "127.0.0.1", lm.port());
                java.util.Random random = new java.util.Random(shuffle);
                long count = 0;
                long sum = 0;
                for (int m = 0; m < spec.numMappers; m++) {
                    MapOutputWriter w = client.openWriter(spec, m, 0);
                    for (int i = 0; i < 1500; i++) {
                        byte[] rec = new byte[RECORD];
                        random.nextBytes(rec);
                        w.write(i % spec.numPartitions, rec, 0, rec.length);
                        count++;
                        sum += Arrays.hashCode(rec) * 0x9E3779B97F4A7C15L;
                    }
                    w.finish();
                }
                long readCount = 0;
                long readSum = 0;
                try (io.estuary.client.read.ShuffleBatchReader r = new io.estuary.client.read.ShuffleBatchReader(
                        client, spec, 0, spec.numPartitions, 0, spec.numMappers)) {
                    io.netty.buffer.ByteBuf b;
                    while ((b = r.next()) != null) {
                        while (b.isReadable()) {
                            byte[] rec = new byte[RECORD];
                            b.readBytes(rec);
                            readCount++;
                            readSum += Arrays.hashCode(rec) * 0x9E3779B97F4A7C15L;
                        }
                    }
                }
                assertEquals(count, readCount, lm.appId() + ": records read back");
                assertEquals(sum, readSum, lm.appId() + ": checksum of the records read back");
            }
        }

        private static final int RECORD = 100;

        @Override
        public void close() {
            lm.close();
        }
    }

    private CliRun cli(String... args) {
        List<String> all = new ArrayList<>(Arrays.asList("--token-file", tokenFile.toString(), "--master", masters));
        all.addAll(Arrays.asList(args));
        return CliRun.logged(all.toArray(new String[0]));
    }
}
