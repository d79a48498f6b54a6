package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.estuary.client.ShuffleClient;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.LocationTable;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.testing.Waits;
import io.estuary.testing.process.MasterProcesses;
import io.estuary.testing.process.WorkerProcesses;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The previous release's servers (its distribution's {@code jars/}, started as child JVMs) beside this build's, as a
 * rolling upgrade mixes them, with this build's client: a master of this build replays the Raft log and snapshot a
 * master of the previous release wrote; a worker of this build, started on the disks and RocksDB metadata a worker of
 * the previous release committed to, serves every partition; masters of both releases form one Raft group; workers of
 * both releases replicate to each other. Every shuffle is read back and compared, per partition, with what was written
 * (record count and an order-independent checksum). The previous release's clients are not run here (their classes
 * share this build's package names): {@code build/check-ansible.sh} runs jobs with its client jars.
 *
 * <p>The distribution comes from {@code -Destuary.previousRelease.dist} (build/test.sh sets it from
 * build/previous-release.sh). When CHANGELOG.md names a release commit other than HEAD and the property is absent,
 * the test fails: the window is then unproven, which must not pass as a skip.
 */
class PreviousReleaseTest {
    private static final int MAPS = 2;
    private static final int PARTITIONS = 5;
    private static final int RECORDS_PER_MAP = 400;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The previous release's server class path ({@code <dist>/jars/*}). */
    private static String previous;

    private static String previousVersion;

    /**
     * The tests' Log4j configuration for servers of the previous release too (its jars carry none): their logs show
     * what this build's show, e.g. the graceful stop.
     */
    private static String logging;

    @BeforeAll
    static void previousRelease() throws Exception {
        String[] named = previousReleaseNamed();
        String dist = System.getProperty("estuary.previousRelease.dist", "").trim();
        if (named == null) {
            org.junit.jupiter.api.Assumptions.assumeTrue(false, "CHANGELOG.md names no release before this commit");
        }
        assertFalse(
                dist.isEmpty(),
                "CHANGELOG.md names release " + named[0] + " (commit " + named[1]
                        + ") but -Destuary.previousRelease.dist"
                        + " is not set: run build/test.sh, or pass the folder build/previous-release.sh prints");
        Path d = Paths.get(dist);
        String version = new String(Files.readAllBytes(d.resolve("VERSION")), StandardCharsets.UTF_8).trim();
        assertEquals(named[0], version, "the distribution in " + dist + " is not the previous release's");
        assertTrue(Files.isDirectory(d.resolve("jars")), "no jars/ in " + dist);
        previous = d.resolve("jars").toAbsolutePath() + "/*";
        previousVersion = version;
        logging = "log4j2.configurationFile="
                + Paths.get(PreviousReleaseTest.class
                        .getResource("/log4j2-test.xml")
                        .toURI());
        System.out.println("PREVIOUS RELEASE: " + version + " from " + dist);
    }

    /**
     * An upgrade in place: two masters of the previous release (a Raft group, snapshotting every few entries) and two
     * workers of the previous release serve shuffles of this build's client, the last ones registered after each
     * master's newest snapshot, so they live in the log only. Both masters are killed and this build's masters start
     * on their Raft storage: the leader must know every shuffle and worker. Then each worker is stopped with SIGTERM
     * and this build's worker starts on its disks and metadata: every partition reads back as written.
     */
    @Test
    void masterAndWorkersUpgradedInPlaceServeWhatThePreviousReleaseWrote() throws Exception {
        try (MasterProcesses masters = new MasterProcesses(
                        Arrays.asList(previous, previous), logging, "estuary.master.ha.snapshotThreshold=8");
                WorkerProcesses workers = new WorkerProcesses(
                        Arrays.asList(previous, previous),
                        masters.endpoints(),
                        logging,
                        "estuary.worker.shutdown.timeout=15s")) {
            int oldLeader = masters.awaitLeader();
            workers.awaitRegistered(() -> masters.registeredWorkers(oldLeader), 90_000);
            assertVersion(masters, oldLeader, previousVersion);
            // Authentication off, as on the servers (the harness runs servers mixed with release 0.1.0 without it).
            EstuaryConf conf =
                    new EstuaryConf().set(AuthConfig.ENABLED, "false").set(MasterConfig.ENDPOINTS, masters.endpoints());
            LifecycleManager driver = new LifecycleManager("app-upgrade-" + System.nanoTime(), conf, "127.0.0.1");
            ShuffleClient client = new ShuffleClient(conf);
            try {
                // This build's client on the previous release's masters and workers, until each master has a
                // snapshot and entries after it.
                List<Written> written = new ArrayList<>();
                while (written.size() < 4 || !entriesAfterSnapshots(masters, oldLeader)) {
                    assertTrue(written.size() < 30, "no Raft snapshot followed by log entries after 30 shuffles");
                    written.add(write(client, driver, written.size()));
                }
                awaitCommits(driver, written.size());
                for (Written w : written) check(client, w, "on " + previousVersion + " servers");
                long appliedBefore = appliedIndex(masters, oldLeader);
                System.out.println("PREVIOUS RELEASE: " + written.size() + " shuffles on " + previousVersion
                        + " servers read back; newest snapshots " + snapshots(masters.raftDir(0)) + " / "
                        + snapshots(masters.raftDir(1)) + ", applied index " + appliedBefore);

                // The masters upgraded in place: this build's masters replay each one's snapshot and the log after it.
                for (int m = 0; m < masters.size(); m++) masters.kill(m);
                for (int m = 0; m < masters.size(); m++) {
                    masters.classPath(m, null);
                    masters.start(m);
                }
                int leader = masters.awaitLeader();
                JsonNode status = JSON.readTree(masters.get(leader, "/api/status"));
                assertNotEquals(previousVersion, status.path("version").asText(), "the master was not upgraded");
                assertTrue(
                        status.path("appliedIndex").asLong() >= appliedBefore,
                        "applied index " + status.path("appliedIndex") + " after the upgrade, " + appliedBefore
                                + " before");
                Set<Integer> shuffles = new TreeSet<>();
                for (JsonNode app : status.path("applications")) {
                    if (!app.path("id").asText().equals(driver.appId())) continue;
                    for (JsonNode s : app.path("shuffles")) {
                        shuffles.add(s.path("id").asInt());
                        assertEquals(PARTITIONS, s.path("partitions").asInt(), "partitions of shuffle " + s);
                    }
                }
                Set<Integer> expected = new TreeSet<>();
                for (Written w : written) expected.add(w.spec.shuffleId);
                assertEquals(expected, shuffles, "shuffles this build's master replayed: " + status);
                Set<String> workerIds = new HashSet<>();
                for (JsonNode w : status.path("workers"))
                    workerIds.add(w.path("id").asText());
                assertTrue(
                        workerIds.containsAll(Arrays.asList(workers.workerId(0), workers.workerId(1))),
                        "workers this build's master knows: " + workerIds);
                System.out.println("PREVIOUS RELEASE: master "
                        + status.path("version").asText()
                        + " replayed the snapshot and log of " + previousVersion + ": appliedIndex "
                        + status.path("appliedIndex").asLong() + ", shuffles " + shuffles + ", workers " + workerIds);
                // It serves: a new shuffle on this build's master and the previous release's workers.
                written.add(write(client, driver, written.size()));
                awaitCommits(driver, written.size());
                check(client, written.get(written.size() - 1), "on a replayed master");

                // Each worker upgraded in place: stopped gracefully, this build's worker on its disks and metadata.
                for (int i = 0; i < workers.size(); i++) {
                    // A JVM ended by SIGTERM exits 143 once its shutdown hooks (the graceful stop) have run.
                    int code = workers.stop(i);
                    System.out.println("PREVIOUS RELEASE: " + previousVersion + " worker " + i + " stopped (exit "
                            + code + "); this build's worker starts on its disks");
                    workers.classPath(i, null);
                    workers.restart(i, false);
                }
                Waits.waitFor(
                        () -> {
                            workers.failIfDied();
                            return upgradedWorkers(masters, leader, previousVersion) == workers.size();
                        },
                        90_000,
                        "this build's workers active on the master");
                for (int i = 0; i < workers.size(); i++) {
                    String log = workers.log(i);
                    assertTrue(log.contains("Graceful stop:"), "worker " + i + " did not stop gracefully");
                }
                for (Written w : written) check(client, w, "after this build's workers replaced the previous ones");
                System.out.println("PREVIOUS RELEASE: this build's workers on " + previousVersion + " disks served all "
                        + written.size() + " shuffles, every partition as written");
            } finally {
                client.close();
                driver.close();
            }
        }
    }

    /**
     * Masters of both releases in one Raft group (two of the previous release, one of this build), leadership handed
     * to each release in turn, with workers of both releases replicating to each other: every master applies every
     * registration, and every shuffle reads back as written.
     */
    @Test
    void mixedMastersAndWorkersOfBothReleasesServeTogether() throws Exception {
        try (MasterProcesses masters = new MasterProcesses(Arrays.asList(previous, previous, null), logging);
                WorkerProcesses workers = new WorkerProcesses(
                        Arrays.asList(previous, null, previous, null), masters.endpoints(), logging)) {
            int leader = masters.awaitLeader();
            workers.awaitRegistered(() -> masters.registeredWorkers(leader), 90_000);
            // Authentication off, as on the servers (the harness runs servers mixed with release 0.1.0 without it).
            EstuaryConf conf =
                    new EstuaryConf().set(AuthConfig.ENABLED, "false").set(MasterConfig.ENDPOINTS, masters.endpoints());
            LifecycleManager driver = new LifecycleManager("app-mixed-" + System.nanoTime(), conf, "127.0.0.1");
            ShuffleClient client = new ShuffleClient(conf);
            try {
                List<Written> written = new ArrayList<>();
                int oldToNew = 0;
                int newToOld = 0;
                for (int target : new int[] {2, 0, 2}) {
                    transferLeadership(masters, target);
                    for (int k = 0; k < 3; k++) {
                        Written w = write(client, driver, written.size());
                        written.add(w);
                        for (int p = 0; p < PARTITIONS; p++) {
                            PartitionLocation l = w.locations.get(p);
                            assertTrue(l.hasPeer(), "partition " + p + " of " + w.spec + " has no replica");
                            boolean primaryOld =
                                    isPrevious(workers, l.getWorker().getRpcPort());
                            boolean peerOld =
                                    isPrevious(workers, l.getPeer().getWorker().getRpcPort());
                            if (primaryOld && !peerOld) oldToNew++;
                            if (!primaryOld && peerOld) newToOld++;
                        }
                    }
                    System.out.println("PREVIOUS RELEASE: master m" + target + " ("
                            + (target == 2 ? "this build" : previousVersion) + ") leads; "
                            + written.size() + " shuffles registered");
                }
                awaitCommits(driver, written.size());
                for (Written w : written) check(client, w, "in a mixed cluster");
                assertTrue(oldToNew > 0, "no partition replicated from a previous-release worker to a current one");
                assertTrue(newToOld > 0, "no partition replicated from a current worker to a previous-release one");
                // Every master applied every registration (a diverged follower would show fewer).
                for (int m = 0; m < masters.size(); m++) {
                    final int mm = m;
                    Waits.waitFor(
                            () -> masters.registeredWorkers(mm) == workers.size(),
                            30_000,
                            "master m" + m + " knows every worker");
                    JsonNode apps = JSON.readTree(masters.get(m, "/api/applications"));
                    int shuffles = 0;
                    for (JsonNode app : apps.path("applications")) {
                        if (app.path("id").asText().equals(driver.appId()))
                            shuffles = app.path("shuffles").size();
                    }
                    assertEquals(written.size(), shuffles, "shuffles master m" + m + " applied: " + apps);
                }
                // This build's master asked the others over Raft what they apply: the previous release has no
                // answer, so it is held to that release's log and snapshot formats (GroupFormats).
                for (String old : new String[] {"m0", "m1"}) {
                    String line = "Raft member " + old + " runs release " + previousVersion + " (log format 1,"
                            + " snapshot format 1)";
                    Waits.waitFor(
                            () -> {
                                try {
                                    return masters.log(2).contains(line);
                                } catch (java.io.IOException e) {
                                    return false;
                                }
                            },
                            30_000,
                            "this build's master knows " + old + " runs " + previousVersion);
                }
                System.out.println("PREVIOUS RELEASE: mixed group (2 x " + previousVersion + " + this build) and "
                        + "mixed workers: " + written.size() + " shuffles read back; replicas old->new " + oldToNew
                        + ", new->old " + newToOld + "; every master holds " + written.size() + " shuffles");
            } finally {
                client.close();
                driver.close();
            }
        }
    }

    /** Worker 0 and 2 run the previous release in the mixed test. */
    private static boolean isPrevious(WorkerProcesses workers, int rpcPort) {
        return rpcPort == workers.rpcPort(0) || rpcPort == workers.rpcPort(2);
    }

    /**
     * Hands leadership to master {@code to}, asking again while a handover fails (e.g. {@code to} still catches up).
     * Two minutes: on a loaded two-core machine a mixed group has once taken more than one (CI, 2026-11-27); the
     * failure then says what the last handover answered, or that no master led.
     */
    private static void transferLeadership(MasterProcesses masters, int to) throws Exception {
        String[] last = {"no master led while waiting"};
        try {
            Waits.waitFor(
                    () -> {
                        if (masters.isLeader(to)) return true;
                        for (int m = 0; m < masters.size(); m++) {
                            if (masters.isLeader(m)) last[0] = "m" + m + " answered " + post(masters.httpPort(m), to);
                        }
                        return masters.isLeader(to);
                    },
                    120_000,
                    "m" + to + " leads");
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + " (last handover: " + last[0] + ")", e);
        }
    }

    /** POST /api/leadership/transfer?to=m{@code to}: the HTTP status, or -1 when the master does not answer. */
    private static int post(int httpPort, int to) {
        try {
            java.net.HttpURLConnection c = (java.net.HttpURLConnection)
                    new java.net.URL("http://127.0.0.1:" + httpPort + "/api/leadership/transfer?to=m" + to)
                            .openConnection();
            c.setRequestMethod("POST");
            c.setConnectTimeout(5000);
            c.setReadTimeout(30_000);
            int code = c.getResponseCode();
            c.disconnect();
            return code;
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Whether each master's newest snapshot is older than the leader's applied index: the entries after it are in the
     * log only (both masters hold every committed entry: a group of two commits on both).
     */
    private static boolean entriesAfterSnapshots(MasterProcesses masters, int leader) throws IOException {
        long applied = appliedIndex(masters, leader);
        for (int m = 0; m < masters.size(); m++) {
            long newest = -1;
            for (String f : snapshots(masters.raftDir(m))) {
                Matcher x = SNAPSHOT_FILE.matcher(f);
                if (x.find()) newest = Math.max(newest, Long.parseLong(x.group(1)));
            }
            if (newest < 0 || newest >= applied) return false;
        }
        return true;
    }

    private static final Pattern SNAPSHOT_FILE = Pattern.compile("snapshot\\.\\d+_(\\d+)$");

    private static long appliedIndex(MasterProcesses masters, int m) throws IOException {
        return JSON.readTree(masters.get(m, "/api/status")).path("appliedIndex").asLong();
    }

    private static void assertVersion(MasterProcesses masters, int m, String version) throws IOException {
        JsonNode status = JSON.readTree(masters.get(m, "/api/status"));
        assertEquals(version, status.path("version").asText(), "master version: " + status);
    }

    /** Workers master m holds active with a version other than {@code not}. */
    private static int upgradedWorkers(MasterProcesses masters, int m, String not) {
        try {
            String body = masters.get(m, "/api/workers");
            if (body == null) return -1;
            int n = 0;
            for (JsonNode w : JSON.readTree(body).path("workers")) {
                if (w.path("state").asText().equals("ACTIVE")
                        && !w.path("version").asText().equals(not)) n++;
            }
            return n;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void awaitCommits(LifecycleManager driver, int shuffles) throws InterruptedException {
        Waits.waitFor(() -> driver.commitsFinished() >= shuffles, 120_000, shuffles + " shuffles committed");
    }

    /** Snapshot files in a master's Raft storage. */
    private static Set<String> snapshots(Path raft) throws IOException {
        Set<String> out = new TreeSet<>();
        if (!Files.exists(raft)) return out;
        try (Stream<Path> s = Files.walk(raft)) {
            s.filter(p -> p.getFileName().toString().startsWith("snapshot."))
                    .forEach(p -> out.add(raft.relativize(p).toString()));
        }
        return out;
    }

    /** A shuffle written by {@link #MAPS} maps, and per partition its record count and checksum. */
    private static final class Written {
        final ShuffleSpec spec;
        final LocationTable locations;
        final long[][] expected = new long[PARTITIONS][2];

        Written(ShuffleSpec spec, LocationTable locations) {
            this.spec = spec;
            this.locations = locations;
        }
    }

    private static Written write(ShuffleClient client, LifecycleManager driver, int shuffleId) throws Exception {
        ShuffleSpec spec = new ShuffleSpec(driver.appId(), shuffleId, MAPS, PARTITIONS, "127.0.0.1", driver.port());
        Written w = new Written(spec, client.register(spec, 0, false));
        for (int m = 0; m < MAPS; m++) {
            MapOutputWriter out = client.openWriter(spec, m, 0);
            for (int i = 0; i < RECORDS_PER_MAP; i++) {
                byte[] r = record(shuffleId, m, i);
                int p = (int) Math.floorMod(hash(r), (long) PARTITIONS);
                out.write(p, r, 0, r.length);
                w.expected[p][0]++;
                w.expected[p][1] += hash(r);
            }
            out.finish();
        }
        return w;
    }

    private static void check(ShuffleClient client, Written w, String where) throws Exception {
        for (int p = 0; p < PARTITIONS; p++) {
            long count = 0;
            long sum = 0;
            try (ShuffleBatchReader r = client.openReader(w.spec, p, p + 1, 0, MAPS)) {
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
            assertEquals(w.expected[p][0], count, "records of partition " + p + " of " + w.spec + " " + where);
            assertEquals(w.expected[p][1], sum, "checksum of partition " + p + " of " + w.spec + " " + where);
        }
    }

    /** A 4-byte length and that many seeded random bytes, so a reader can split batches into records. */
    private static byte[] record(int shuffle, int map, int i) {
        byte[] r = new byte[40 + i % 60];
        new Random(shuffle * 1_000_003L + map * 7_919L + i).nextBytes(r);
        return ByteBuffer.allocate(4 + r.length).putInt(r.length).put(r).array();
    }

    private static long hash(byte[] record) {
        return Arrays.hashCode(record) * 0x9E3779B97F4A7C15L;
    }

    /**
     * The newest release CHANGELOG.md names with a commit other than HEAD, as {version, commit}, or null when there is
     * none (the first release's own commit, or no CHANGELOG.md).
     */
    private static String[] previousReleaseNamed() throws Exception {
        Path dir = Paths.get(System.getProperty("user.dir")).toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("CHANGELOG.md"))) dir = dir.getParent();
        if (dir == null) return null;
        String head = "";
        try {
            Process git = new ProcessBuilder("git", "rev-parse", "HEAD")
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (git.waitFor() == 0) head = out;
        } catch (IOException e) {
            // no git: every named release counts as earlier
        }
        Pattern heading = Pattern.compile("^## \\[?v?(\\d+\\.\\d+\\.\\d+)");
        Pattern commit = Pattern.compile("commit:? `?([0-9a-f]{7,40})\\b");
        String version = null;
        for (String line : Files.readAllLines(dir.resolve("CHANGELOG.md"), StandardCharsets.UTF_8)) {
            Matcher h = heading.matcher(line);
            if (line.startsWith("## ")) version = h.find() ? h.group(1) : null;
            if (version == null) continue;
            Matcher c = commit.matcher(line);
            if (c.find()) {
                String id = c.group(1);
                if (head.isEmpty() || !head.startsWith(id)) return new String[] {version, id};
                version = null;
            }
        }
        return null;
    }
}
