package io.estuary.master.state;

import io.estuary.common.BuildVersion;
import io.estuary.common.release.Format;
import io.estuary.common.release.Releases;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.master.protocol.MasterFormats;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The Raft log and snapshot formats every member of this master's Raft group applies, as the members reported them
 * ({@link MasterFormats}, asked through a Ratis read): a master writes to the log and to its snapshots only what the
 * oldest member applies, so a group in the middle of a rolling upgrade never holds an entry or a snapshot one of its
 * masters cannot read. A member that has not answered yet (down, or not asked yet) counts as the oldest release this
 * code reads; one that answers without formats is a master of 0.1.0, which has no such answer. Thread-safe: the
 * poller reports, the apply thread and request threads read.
 */
final class GroupFormats {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GroupFormats.class);
    /** What a master of 0.1.0 applies: it answers the question with nothing. */
    static final MasterFormats RELEASE_0_1_0 = MasterFormats.newBuilder()
            .setRaftLog(1)
            .setRaftSnapshot(1)
            .setRelease(Releases.V0_1_0.version())
            .build();

    private final String selfId;
    /** Each other member's last answer; absent: unknown (counts as the oldest readable). Guarded by this. */
    private final Map<String, MasterFormats> reported = new TreeMap<>();

    private final List<String> others = new ArrayList<>();

    GroupFormats(String selfId, Collection<String> memberIds) {
        this.selfId = selfId;
        for (String id : memberIds) {
            if (!id.equals(selfId)) others.add(id);
        }
    }

    /** What this master applies: the answer it gives its peers. */
    static MasterFormats ours() {
        return MasterFormats.newBuilder()
                .setRaftLog(Format.RAFT_LOG.version())
                .setRaftSnapshot(Format.RAFT_SNAPSHOT.version())
                .setRelease(BuildVersion.built())
                .build();
    }

    /** Member {@code id} answered {@code answer} (empty: a master of 0.1.0). */
    synchronized void reported(String id, MasterFormats answer) {
        if (!others.contains(id)) return;
        MasterFormats f = answer.getRaftSnapshot() == 0 ? RELEASE_0_1_0 : answer;
        if (!f.equals(reported.put(id, f))) {
            LOG.info(
                    "Raft member {} runs release {} (log format {}, snapshot format {}); this master writes log "
                            + "format {} and snapshot format {} from now on",
                    id,
                    f.getRelease(),
                    f.getRaftLog(),
                    f.getRaftSnapshot(),
                    oldest(Format.RAFT_LOG),
                    oldest(Format.RAFT_SNAPSHOT));
        }
    }

    /** Member {@code id} did not answer: it may come back as another release, so what it said no longer counts. */
    synchronized void unreachable(String id) {
        if (reported.remove(id) != null) {
            LOG.info(
                    "Raft member {} does not answer: counted as the oldest release read until it does (snapshot "
                            + "format {})",
                    id,
                    oldest(Format.RAFT_SNAPSHOT));
        }
    }

    /** Member {@code id}'s last answer, or null while it has not answered (for status pages and tests). */
    synchronized MasterFormats reportedBy(String id) {
        return reported.get(id);
    }

    /** The snapshot format to write: the newest that every member installs. */
    int snapshotFormat() {
        return oldest(Format.RAFT_SNAPSHOT);
    }

    /** The newest Raft log format every member applies. */
    int logFormat() {
        return oldest(Format.RAFT_LOG);
    }

    private synchronized int oldest(Format format) {
        int v = format.version();
        for (String id : others) {
            MasterFormats f = reported.get(id);
            v = Math.min(v, f == null ? format.oldestRead() : valueOf(format, f));
        }
        return v;
    }

    private static int valueOf(Format format, MasterFormats f) {
        return format == Format.RAFT_LOG ? f.getRaftLog() : f.getRaftSnapshot();
    }

    /**
     * Refuses, before it is logged, {@code what} that needs Raft log format {@code needed} while a member applies
     * only an older one: {@code VERSION_MISMATCH} naming the members and their releases. Nothing is refused once
     * every master runs a release that applies it.
     */
    synchronized void checkLoggable(int needed, String what) {
        if (needed <= Format.RAFT_LOG.oldestRead()) return; // every release in the window applies it
        List<String> older = new ArrayList<>();
        for (String id : others) {
            MasterFormats f = reported.get(id);
            if (f == null) {
                older.add(id + " (release unknown: not reachable yet)");
            } else if (f.getRaftLog() < needed) {
                older.add(id + " (release " + f.getRelease() + ", Raft log format " + f.getRaftLog() + ")");
            }
        }
        if (older.isEmpty()) return;
        throw new StatusException(
                StatusCode.VERSION_MISMATCH,
                what + " needs Raft log format " + needed + " (this master " + selfId + ", release "
                        + BuildVersion.built() + ") but master(s) " + String.join(", ", older)
                        + " cannot apply it; refused before it entered the log: upgrade every master first");
    }
}
