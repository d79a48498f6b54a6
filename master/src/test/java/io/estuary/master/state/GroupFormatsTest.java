package io.estuary.master.state;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.release.Format;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.master.protocol.ApplicationRegistered;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.MasterFormats;
import io.estuary.master.protocol.MasterSnapshot;
import io.estuary.master.protocol.ShuffleUnregistered;
import io.estuary.master.protocol.UnregisteredShuffles;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A master writes to the log and to its snapshots only what every member of its Raft group applies: a member of
 * release 0.1.0 (it answers the formats question with nothing), or one not heard from, holds the group to 0.1.0's
 * formats.
 */
class GroupFormatsTest {
    private static final List<String> GROUP = Arrays.asList("m0", "m1", "m2");

    private static MasterFormats logFormat(int v) {
        return GroupFormats.ours().toBuilder().setRaftLog(v).setRelease("9.9.9").build();
    }

    @Test
    void membersNotHeardFromCountAsTheOldestRelease() {
        GroupFormats g = new GroupFormats("m0", GROUP);
        assertEquals(Format.RAFT_SNAPSHOT.oldestRead(), g.snapshotFormat());
        assertEquals(Format.RAFT_LOG.oldestRead(), g.logFormat());
        g.reported("m1", GroupFormats.ours());
        assertEquals(Format.RAFT_SNAPSHOT.oldestRead(), g.snapshotFormat(), "m2 still unknown");
        g.reported("m2", GroupFormats.ours());
        assertEquals(Format.RAFT_SNAPSHOT.version(), g.snapshotFormat(), "every member runs this release");
        assertEquals(Format.RAFT_LOG.version(), g.logFormat());
    }

    @Test
    void aMemberOfTheLastReleaseHoldsTheGroupToItsFormatsUntilItIsUpgraded() {
        GroupFormats g = new GroupFormats("m0", GROUP);
        g.reported("m1", GroupFormats.ours());
        g.reported("m2", MasterFormats.getDefaultInstance()); // 0.1.0 has no answer: an empty reply
        assertEquals(1, g.snapshotFormat());
        g.unreachable("m2"); // restarted, as the rolling upgrade does
        assertEquals(1, g.snapshotFormat(), "unknown while it restarts");
        g.reported("m2", GroupFormats.ours());
        assertEquals(Format.RAFT_SNAPSHOT.version(), g.snapshotFormat());
        g.unreachable("m1"); // a downgrade may bring it back as 0.1.0
        assertEquals(1, g.snapshotFormat());
    }

    @Test
    void aCommandAnOlderMemberCannotApplyIsRefusedBeforeItIsLogged() {
        GroupFormats g = new GroupFormats("m0", GROUP);
        g.checkLoggable(1, "every command of 0.1.0"); // never refused
        g.reported("m1", logFormat(2));
        g.reported("m2", MasterFormats.getDefaultInstance());
        StatusException e = assertThrows(StatusException.class, () -> g.checkLoggable(2, "A_NEW_COMMAND"));
        assertEquals(StatusCode.VERSION_MISMATCH, e.status());
        assertTrue(e.getMessage().contains("A_NEW_COMMAND"), e.getMessage());
        assertTrue(e.getMessage().contains("m2 (release 0.1.0, Raft log format 1)"), e.getMessage());
        assertFalse(e.getMessage().contains("m1"), e.getMessage());
        g.reported("m2", logFormat(2)); // upgraded
        g.checkLoggable(2, "A_NEW_COMMAND");
        g.unreachable("m1");
        e = assertThrows(StatusException.class, () -> g.checkLoggable(2, "A_NEW_COMMAND"));
        assertTrue(e.getMessage().contains("m1 (release unknown"), e.getMessage());
    }

    @Test
    void everyCommandOfThisReleaseIsOneTheLastReleaseApplies() {
        for (MasterCommand c : MasterStateMachineTest.history()) {
            assertEquals(1, CommandFormats.logFormatOf(c), c.getCommandCase().toString());
        }
        // A field added later raises what a command needs, wherever it sits in the command.
        MasterCommand c = MasterCommand.newBuilder()
                .setShuffleUnregistered(
                        ShuffleUnregistered.newBuilder().setAppId("a").setShuffleId(3))
                .build();
        assertEquals(
                2,
                CommandFormats.logFormatOf(
                        c, java.util.Collections.singletonMap("estuary.ShuffleUnregistered.shuffle_id", 2)));
    }

    @Test
    void bindingAPrincipalNeedsLogFormat2() {
        io.estuary.common.protocol.ApplicationPrincipal alice =
                io.estuary.common.protocol.ApplicationPrincipal.newBuilder()
                        .setUser("alice")
                        .build();
        assertEquals(
                2,
                CommandFormats.logFormatOf(MasterCommand.newBuilder()
                        .setApplicationRegistered(
                                ApplicationRegistered.newBuilder().setAppId("a").setPrincipal(alice))
                        .build()));
        assertEquals(
                2,
                CommandFormats.logFormatOf(MasterCommand.newBuilder()
                        .setApplicationPrincipalBound(io.estuary.master.protocol.ApplicationPrincipalBound.newBuilder()
                                .setAppId("a")
                                .setPrincipal(alice))
                        .build()));
        // Inside a batch too; and a registration without one is what 0.1.0 applies.
        assertEquals(
                2,
                CommandFormats.logFormatOf(MasterCommand.newBuilder()
                        .setBatch(io.estuary.master.protocol.MasterCommandBatch.newBuilder()
                                .addCommands(MasterCommand.newBuilder()
                                        .setApplicationPrincipalBound(
                                                io.estuary.master.protocol.ApplicationPrincipalBound.newBuilder()
                                                        .setAppId("a")
                                                        .setPrincipal(alice))))
                        .build()));
        assertEquals(
                1,
                CommandFormats.logFormatOf(MasterCommand.newBuilder()
                        .setApplicationRegistered(
                                ApplicationRegistered.newBuilder().setAppId("a"))
                        .build()));
    }

    @Test
    void aSnapshotForAGroupWithAMasterOfTheLastReleaseHoldsOnlyWhatThatReleaseInstalls() {
        MasterStateMachine m = new MasterStateMachine();
        m.apply(MasterCommand.newBuilder()
                .setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId("a"))
                .build());
        for (int id = 0; id < 3000; id++) {
            if (id == 2500) continue; // still live: splits the ids in two ranges
            m.apply(MasterCommand.newBuilder()
                    .setShuffleUnregistered(
                            ShuffleUnregistered.newBuilder().setAppId("a").setShuffleId(id))
                    .build());
        }
        GroupFormats g = new GroupFormats("m0", GROUP);
        g.reported("m1", GroupFormats.ours());
        g.reported("m2", MasterFormats.getDefaultInstance()); // 0.1.0
        MasterSnapshot old = m.snapshot(g.snapshotFormat());
        UnregisteredShuffles u = old.getUnregistered(0);
        assertEquals(0, u.getRangeEndsCount(), "0.1.0 knows no ranges");
        assertEquals(MasterStateMachine.FORMAT_1_UNREGISTERED_PER_APP, u.getShuffleIdsCount(), "0.1.0's bound");
        assertEquals(1999, u.getShuffleIds(0), "the highest ids, ascending (2500 is not one)");
        assertEquals(2999, u.getShuffleIds(u.getShuffleIdsCount() - 1));
        assertFalse(u.getShuffleIdsList().contains(2500), "never a live shuffle");

        // What 0.1.0 reads it as: single ids (its restore loop). A master of this release reads it the same way.
        MasterStateMachine restored = new MasterStateMachine();
        restored.restore(old);
        assertTrue((boolean) restored.read(s -> s.isShuffleUnregistered("a", 1999)));
        assertTrue((boolean) restored.read(s -> s.isShuffleUnregistered("a", 2999)));
        assertFalse((boolean) restored.read(s -> s.isShuffleUnregistered("a", 2500)));
        assertFalse((boolean) restored.read(s -> s.isShuffleUnregistered("a", 1998)), "beyond 0.1.0's bound");

        // Once every member runs this release: ranges, and nothing forgotten.
        g.reported("m2", GroupFormats.ours());
        MasterSnapshot current = m.snapshot(g.snapshotFormat());
        assertEquals(Arrays.asList(0, 2501), current.getUnregistered(0).getShuffleIdsList());
        assertEquals(Arrays.asList(2499, 2999), current.getUnregistered(0).getRangeEndsList());
        assertThrows(IllegalArgumentException.class, () -> m.snapshot(Format.RAFT_SNAPSHOT.version() + 1));
    }

    @Test
    void theStateMachineAnswersWhatItApplies() throws Exception {
        RatisStateMachine sm = new RatisStateMachine(new MasterStateMachine(), () -> {}, why -> {});
        MasterFormats answer = MasterFormats.parseFrom(sm.query(org.apache.ratis.protocol.Message.EMPTY)
                .get()
                .getContent()
                .toByteArray());
        assertEquals(GroupFormats.ours(), answer);
        assertEquals(Format.RAFT_SNAPSHOT.version(), answer.getRaftSnapshot());
    }
}
