package io.estuary.master.state;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.master.protocol.ApplicationRegistered;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.WorkerRegistered;
import java.io.ByteArrayOutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/**
 * A log entry this master cannot apply (a newer master's command, as during a rolling upgrade) must stop the master,
 * never be skipped: skipping it would let this master's state silently differ from the others'.
 */
class RatisApplyFailureTest {
    private static final long TERM = 1;

    private static MasterCommand registerWorker() {
        return MasterCommand.newBuilder()
                .setWorkerRegistered(WorkerRegistered.newBuilder()
                        .setWorker(WorkerInfo.newBuilder()
                                .setAddress(
                                        WorkerAddress.newBuilder().setHost("h").setRpcPort(1))))
                .build();
    }

    private static MasterCommand registerApp(String app) {
        return MasterCommand.newBuilder()
                .setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId(app))
                .build();
    }

    /** A command written by a newer master: a field (number 60) this version does not know. */
    private static byte[] fromANewerVersion() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        com.google.protobuf.CodedOutputStream c = com.google.protobuf.CodedOutputStream.newInstance(out);
        c.writeString(60, "a change this version has never heard of");
        c.flush();
        return out.toByteArray();
    }

    /** A known command carrying a field this version does not know (it would apply only part of what was meant). */
    private static byte[] knownCommandWithAnUnknownField() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        com.google.protobuf.CodedOutputStream c = com.google.protobuf.CodedOutputStream.newInstance(out);
        ApplicationRegistered inner =
                ApplicationRegistered.newBuilder().setAppId("app-x").build();
        ByteArrayOutputStream innerBytes = new ByteArrayOutputStream();
        com.google.protobuf.CodedOutputStream ic = com.google.protobuf.CodedOutputStream.newInstance(innerBytes);
        inner.writeTo(ic);
        ic.writeInt32(77, 5);
        ic.flush();
        c.writeByteArray(MasterCommand.APPLICATION_REGISTERED_FIELD_NUMBER, innerBytes.toByteArray());
        c.flush();
        return out.toByteArray();
    }

    private static CompletableFuture<Message> apply(RatisStateMachine sm, long index, byte[] command) {
        LogEntryProto entry = LogEntryProto.newBuilder()
                .setTerm(TERM)
                .setIndex(index)
                .setStateMachineLogEntry(
                        StateMachineLogEntryProto.newBuilder().setLogData(ByteString.copyFrom(command)))
                .build();
        TransactionContext trx = TransactionContext.newBuilder()
                .setStateMachine(sm)
                .setServerRole(RaftPeerRole.FOLLOWER)
                .setLogEntry(entry)
                .build();
        return sm.applyTransaction(trx);
    }

    private void stopsAndSkipsNothing(byte[] bad) throws Exception {
        MasterStateMachine state = new MasterStateMachine();
        AtomicReference<String> fatal = new AtomicReference<>();
        RatisStateMachine sm = new RatisStateMachine(state, () -> {}, fatal::set);

        apply(sm, 1, registerWorker().toByteArray()).get();
        assertEquals(1, sm.getLastAppliedTermIndex().getIndex());
        byte[] before = state.snapshot().toByteArray();

        CompletableFuture<Message> failed = apply(sm, 2, bad);
        ExecutionException e = assertThrows(ExecutionException.class, failed::get);
        assertNotNull(fatal.get(), "the master must be told to stop");
        assertTrue(fatal.get().contains("index 2"), fatal.get());
        assertEquals(1, sm.getLastAppliedTermIndex().getIndex(), "an entry that was not applied is not applied");
        assertArrayEquals(before, state.snapshot().toByteArray(), "nothing of the bad entry is applied");

        // What follows is not applied either: applying it without the bad entry would be a different history.
        assertThrows(
                ExecutionException.class,
                () -> apply(sm, 3, registerApp("app-after").toByteArray()).get());
        assertFalse((boolean) state.read(s -> s.hasApplication("app-after")), "an entry after the bad one was applied");
        assertEquals(1, sm.getLastAppliedTermIndex().getIndex());
        assertNotNull(e.getCause());
    }

    @Test
    void anUnknownCommandStopsTheMaster() throws Exception {
        stopsAndSkipsNothing(fromANewerVersion());
    }

    @Test
    void aKnownCommandWithAnUnknownFieldStopsTheMaster() throws Exception {
        stopsAndSkipsNothing(knownCommandWithAnUnknownField());
    }

    @Test
    void theLeaderRefusesACommandItCannotApplyBeforeLoggingIt() throws Exception {
        LocalStateLog log = new LocalStateLog();
        MasterCommand bad = MasterCommand.parseFrom(fromANewerVersion());
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> log.submit(bad).get());
        assertTrue(e.getCause() instanceof io.estuary.common.status.StatusException, String.valueOf(e.getCause()));
        assertEquals(0, log.appliedIndex());
        MasterCommand partly = MasterCommand.parseFrom(knownCommandWithAnUnknownField());
        assertThrows(ExecutionException.class, () -> log.submit(partly).get());
        assertFalse((boolean) log.stateMachine().read(s -> s.hasApplication("app-x")), "a command was applied in part");
    }
}
