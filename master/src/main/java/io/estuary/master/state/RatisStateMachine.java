package io.estuary.master.state;

import io.estuary.common.release.Format;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.MasterSnapshot;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ratis's view of the {@link MasterStateMachine}: committed log entries are applied to it in order, and its
 * snapshots are written to and loaded from Ratis's state machine directory (so the log can be purged and a
 * lagging or wiped master can be sent the state instead of the whole log).
 */
final class RatisStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(RatisStateMachine.class);

    private final MasterStateMachine state;
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final Runnable leadershipListener;
    private final java.util.function.Consumer<String> applyFailed;
    /** The snapshot format every member of the group installs (the group may hold masters of the last release). */
    private final java.util.function.IntSupplier snapshotFormat;
    /** Set (on the apply thread) once an entry could not be applied: nothing after it is applied either. */
    private volatile String stoppedBecause;

    /**
     * {@code applyFailed} is told, once, why a committed entry could not be applied; the master must stop (it is
     * called on Ratis's apply thread and must not block).
     */
    RatisStateMachine(
            MasterStateMachine state, Runnable leadershipListener, java.util.function.Consumer<String> applyFailed) {
        this(state, leadershipListener, applyFailed, Format.RAFT_SNAPSHOT::version);
    }

    /** As above, writing snapshots in the format {@code snapshotFormat} gives (see {@link GroupFormats}). */
    RatisStateMachine(
            MasterStateMachine state,
            Runnable leadershipListener,
            java.util.function.Consumer<String> applyFailed,
            java.util.function.IntSupplier snapshotFormat) {
        this.state = state;
        this.leadershipListener = leadershipListener;
        this.applyFailed = applyFailed;
        this.snapshotFormat = snapshotFormat;
    }

    /**
     * The only question peers ask (a Ratis read, never logged): which formats this master applies
     * ({@link GroupFormats}). A master of 0.1.0 has no such answer and replies empty.
     */
    @Override
    public CompletableFuture<Message> query(Message request) {
        return CompletableFuture.completedFuture(
                Message.valueOf(org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations.unsafeWrap(
                        GroupFormats.ours().toByteArray())));
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        getLifeCycle().startAndTransition(() -> {
            super.initialize(server, groupId, raftStorage);
            storage.init(raftStorage);
            load(storage.getLatestSnapshot());
        });
    }

    // Ratis pauses the state machine before installing a snapshot sent by the leader and reinitializes it after;
    // the base class leaves these transitions to us.
    @Override
    public void pause() {
        if (getLifeCycleState() == LifeCycle.State.RUNNING) {
            getLifeCycle().transition(LifeCycle.State.PAUSING);
            getLifeCycle().transition(LifeCycle.State.PAUSED);
        }
    }

    @Override
    public void reinitialize() throws IOException {
        load(storage.loadLatestSnapshot());
        if (getLifeCycleState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    private void load(SingleFileSnapshotInfo snap) throws IOException {
        if (snap == null) return;
        File f = snap.getFile().getPath().toFile();
        if (snap.getFile().getFileDigest() != null)
            MD5FileUtil.verifySavedMD5(f, snap.getFile().getFileDigest());
        try (InputStream in = Files.newInputStream(f.toPath())) {
            state.restore(MasterSnapshot.parseFrom(in));
        }
        setLastAppliedTermIndex(snap.getTermIndex());
        LOG.info("Loaded master snapshot {} ({} bytes)", snap.getTermIndex(), f.length());
    }

    @Override
    public long takeSnapshot() throws IOException {
        // Runs on the apply thread, so no command is applied while the state is copied.
        if (stoppedBecause != null) throw new IOException("no snapshot: " + stoppedBecause);
        TermIndex ti = getLastAppliedTermIndex();
        // In the form every master of the group installs: the leader may send this file to any of them.
        int format = snapshotFormat.getAsInt();
        MasterSnapshot snap = state.snapshot(format);
        File f = storage.getSnapshotFile(ti.getTerm(), ti.getIndex());
        File tmp = new File(f.getPath() + ".tmp");
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(
                        tmp.toPath(),
                        java.nio.file.StandardOpenOption.CREATE,
                        java.nio.file.StandardOpenOption.TRUNCATE_EXISTING,
                        java.nio.file.StandardOpenOption.WRITE);
                OutputStream out = java.nio.channels.Channels.newOutputStream(ch)) {
            snap.writeTo(out);
            out.flush();
            ch.force(true); // Ratis purges the log up to this snapshot: it must be on disk first
        }
        Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (java.nio.channels.FileChannel dir =
                java.nio.channels.FileChannel.open(f.getParentFile().toPath(), java.nio.file.StandardOpenOption.READ)) {
            dir.force(true); // and so must the rename
        } catch (IOException ignored) {
            // some file systems cannot sync a directory
        }
        MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(f);
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(f.toPath(), md5), ti));
        LOG.info("Took master snapshot {} ({} bytes, format {})", ti, f.length(), format);
        return ti.getIndex();
    }

    /**
     * Applies a committed entry. An entry that cannot be applied is never skipped: the applied index stays before it,
     * nothing after it is applied, and the master is told to stop (loudly), since going on would leave its state
     * different from the other masters' with nobody noticing. Fix the cause (usually: this master is older than the
     * one that wrote the entry) and restart it; it then applies the entry with the rest of the log.
     */
    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto e = trx.getLogEntry();
        if (stoppedBecause != null) return failed(new IllegalStateException(stoppedBecause));
        try {
            state.apply(MasterCommand.parseFrom(
                    e.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer()));
        } catch (Exception | LinkageError ex) {
            String why = "cannot apply log entry index " + e.getIndex() + " (term " + e.getTerm() + "): "
                    + ex.getMessage() + "; this master stops rather than skip it and differ from the other masters";
            stoppedBecause = why;
            LOG.error(why, ex);
            applyFailed.accept(why);
            return failed(ex);
        }
        updateLastAppliedTermIndex(e.getTerm(), e.getIndex());
        return CompletableFuture.completedFuture(Message.EMPTY);
    }

    private static CompletableFuture<Message> failed(Throwable t) {
        CompletableFuture<Message> f = new CompletableFuture<>();
        f.completeExceptionally(t);
        return f;
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeader) {
        leadershipListener.run();
    }

    @Override
    public void notifyLeaderReady() {
        leadershipListener.run();
    }
}
