package io.estuary.master.quota;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.ConfigException;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.Quota;
import io.estuary.master.protocol.QuotaRemoved;
import io.estuary.master.protocol.QuotaScope;
import io.estuary.master.protocol.QuotaSet;
import io.estuary.master.state.MasterStateMachine;
import org.junit.jupiter.api.Test;

/** Quotas as operators write them, and as the replicated state keeps them through snapshots of each format. */
class QuotaSpecTest {
    @Test
    void partsParseAndDescribeBackToTheSameQuota() {
        Quota q = QuotaSpec.parse(
                "quota",
                QuotaScope.QUOTA_USER,
                "alice",
                "bytes=10g, files=1000 shuffles=20,slots=5000,pushRate=100m,policy=wait,maxWait=5min,overBytes=stop");
        assertEquals(10L << 30, q.getMaxBytes());
        assertEquals(1000, q.getMaxFiles());
        assertEquals(20, q.getMaxShuffles());
        assertEquals(5000, q.getMaxSlots());
        assertEquals(100L << 20, q.getMaxPushBytesPerSecond());
        assertTrue(q.getWait());
        assertEquals(300_000, q.getMaxWaitMs());
        assertTrue(q.getStopLargest());
        assertEquals(q, QuotaSpec.parse("quota", QuotaScope.QUOTA_USER, "alice", QuotaSpec.describe(q)));
        assertTrue(QuotaSpec.limitsAnything(q));

        Quota waitDefault = QuotaSpec.parse("q", QuotaScope.QUOTA_TENANT, "etl", "shuffles=3 policy=wait");
        assertEquals(QuotaSpec.DEFAULT_MAX_WAIT_MS, waitDefault.getMaxWaitMs());
        Quota none = QuotaSpec.parse("q", QuotaScope.QUOTA_CLUSTER, "", "  ");
        assertFalse(QuotaSpec.limitsAnything(none));
        assertEquals("", QuotaSpec.describe(none));
        assertFalse(QuotaSpec.limitsAnything(QuotaSpec.parse("q", QuotaScope.QUOTA_CLUSTER, "", "bytes=0,shuffles=0")));
    }

    @Test
    void eachWrongPartIsNamed() {
        assertMessage("q: bytes: 'lots' is not a valid byte size", "bytes=lots");
        assertMessage("q: no quota part 'byte'", "byte=1g");
        assertMessage("q: 'shuffles' is not name=value", "shuffles");
        assertMessage("q: shuffles: '-1' must be 0 (no limit) to 2147483647", "shuffles=-1");
        assertMessage("q: shuffles: '3000000000' must be 0 (no limit) to 2147483647", "shuffles=3000000000");
        assertMessage("q: policy: 'later' is none of refuse, wait", "policy=later");
        assertMessage("q: overBytes: 'kill' is none of warn, stop", "overBytes=kill");
        assertMessage("q: maxWait is the wait of policy=wait", "maxWait=5min");
        assertMessage("q: maxWait: 'soon' is not a valid duration", "policy=wait,maxWait=soon");
        ConfigException e = assertThrows(ConfigException.class, () -> QuotaSpec.scope("scope", "team"));
        assertEquals("scope: scope 'team' is none of user, tenant, cluster", e.getMessage());
    }

    private static void assertMessage(String start, String text) {
        ConfigException e =
                assertThrows(ConfigException.class, () -> QuotaSpec.parse("q", QuotaScope.QUOTA_USER, "alice", text));
        assertTrue(e.getMessage().startsWith(start), e.getMessage());
    }

    @Test
    void quotasAreKeptByTheStateMachineAndInSnapshotsOfEveryFormat() {
        MasterStateMachine sm = new MasterStateMachine();
        Quota alice = QuotaSpec.parse("q", QuotaScope.QUOTA_USER, "alice", "bytes=1g");
        Quota etl = QuotaSpec.parse("q", QuotaScope.QUOTA_TENANT, "etl", "shuffles=5,policy=wait");
        Quota cluster = QuotaSpec.parse("q", QuotaScope.QUOTA_CLUSTER, "", "slots=100000");
        for (Quota q : new Quota[] {alice, etl, cluster}) {
            sm.apply(MasterCommand.newBuilder()
                    .setQuotaSet(QuotaSet.newBuilder().setQuota(q))
                    .build());
        }
        // A user and a tenant of one name are two scopes.
        Quota etlUser = QuotaSpec.parse("q", QuotaScope.QUOTA_USER, "etl", "files=7");
        sm.apply(MasterCommand.newBuilder()
                .setQuotaSet(QuotaSet.newBuilder().setQuota(etlUser))
                .build());
        Quota alice2 = QuotaSpec.parse("q", QuotaScope.QUOTA_USER, "alice", "bytes=2g");
        sm.apply(MasterCommand.newBuilder()
                .setQuotaSet(QuotaSet.newBuilder().setQuota(alice2))
                .build());
        assertEquals(alice2, sm.read(s -> s.quota(QuotaScope.QUOTA_USER, "alice")), "the newest set stays");
        assertEquals(etl, sm.read(s -> s.quota(QuotaScope.QUOTA_TENANT, "etl")));
        assertEquals(etlUser, sm.read(s -> s.quota(QuotaScope.QUOTA_USER, "etl")));

        MasterStateMachine restored = new MasterStateMachine();
        restored.restore(sm.snapshot(2));
        java.util.List<Quota> kept = sm.read(s -> s.quotas());
        java.util.List<Quota> back = restored.read(s -> s.quotas());
        assertEquals(kept, back);
        assertEquals(4, back.size());
        MasterStateMachine old = new MasterStateMachine();
        old.restore(sm.snapshot(1));
        java.util.List<Quota> alsoKept = old.read(s -> s.quotas());
        assertEquals(kept, alsoKept, "written in format 1 too: a master not heard from must not cost them");

        sm.apply(MasterCommand.newBuilder()
                .setQuotaRemoved(QuotaRemoved.newBuilder()
                        .setScope(QuotaScope.QUOTA_USER)
                        .setName("alice"))
                .build());
        assertNull(sm.read(s -> s.quota(QuotaScope.QUOTA_USER, "alice")));
        assertEquals(etl, sm.read(s -> s.quota(QuotaScope.QUOTA_TENANT, "etl")));
    }

    @Test
    void operatorsTagsAndDefaultExpressionsAreKeptInSnapshots() {
        MasterStateMachine sm = new MasterStateMachine();
        io.estuary.master.protocol.WorkerTagsChanged w = io.estuary.master.protocol.WorkerTagsChanged.newBuilder()
                .setWorkerId("h1:1:2:3")
                .addAdded("release=canary")
                .addRemoved("ssd")
                .build();
        sm.apply(MasterCommand.newBuilder().setWorkerTagsChanged(w).build());
        sm.apply(MasterCommand.newBuilder()
                .setDefaultTagsSet(io.estuary.master.protocol.DefaultTagsSet.newBuilder()
                        .setScope(QuotaScope.QUOTA_TENANT)
                        .setName("etl")
                        .setExpression("team=etl"))
                .build());
        assertEquals(w, sm.read(s -> s.workerTags("h1:1:2:3")));
        assertEquals("team=etl", sm.read(s -> s.defaultTags(QuotaScope.QUOTA_TENANT, "etl")));
        assertEquals("", sm.read(s -> s.defaultTags(QuotaScope.QUOTA_USER, "etl")), "a tenant's is not a user's");

        MasterStateMachine restored = new MasterStateMachine();
        restored.restore(sm.snapshot(2));
        assertEquals(w, restored.read(s -> s.workerTags("h1:1:2:3")));
        assertEquals("team=etl", restored.read(s -> s.defaultTags(QuotaScope.QUOTA_TENANT, "etl")));
        MasterStateMachine old = new MasterStateMachine();
        old.restore(sm.snapshot(1));
        assertEquals(w, old.read(s -> s.workerTags("h1:1:2:3")), "written in format 1 too (0.1.0 ignores them)");

        // Both lists empty drops the worker's change; an empty expression the default.
        sm.apply(MasterCommand.newBuilder()
                .setWorkerTagsChanged(io.estuary.master.protocol.WorkerTagsChanged.newBuilder()
                        .setWorkerId("h1:1:2:3"))
                .build());
        sm.apply(MasterCommand.newBuilder()
                .setDefaultTagsSet(io.estuary.master.protocol.DefaultTagsSet.newBuilder()
                        .setScope(QuotaScope.QUOTA_TENANT)
                        .setName("etl"))
                .build());
        assertNull(sm.read(s -> s.workerTags("h1:1:2:3")));
        java.util.List<io.estuary.master.protocol.DefaultTagsSet> left = sm.read(s -> s.defaultTagSets());
        assertTrue(left.isEmpty());
    }
}
