package io.estuary.worker.meta;

import io.estuary.common.util.ShuffleKey;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.Disk;
import io.estuary.worker.storage.StorageManager;
import java.io.File;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a starting worker takes over from its earlier run, before it registers with the master:
 * <ul>
 *   <li>every committed file the metadata store records whose file is still there with its recorded length is
 *       registered as committed, so it is served again once its bytes match the recorded CRC32C; a record whose
 *       file is gone, shorter or longer, or on a storage directory this worker no longer has, is registered as
 *       lost: readers opening it get {@code DISK_FAILED}, as for a file on a failed disk, and read its replica (or
 *       the stage reruns), and a stage-end commit of it fails;</li>
 *   <li>every shuffle directory ({@code <dir>/<appId>/<shuffleId>}) is held as the shuffle's, recorded or not, so
 *       files a crash left behind are reported to the master with the other shuffle keys and deleted only when the
 *       master says their shuffle expired. Nothing is deleted here.</li>
 * </ul>
 *
 * <p>The checksum is checked lazily, when the file is first opened for reading, on its disk's reader threads
 * ({@link CommittedFile#checkRestoredContent}), not here: reading every file at start would hold a restarting
 * worker back for as long as reading its whole disks takes (minutes for hundreds of GB, during a rolling restart),
 * and read files that are never read again (a shuffle already consumed, expiring soon). Read at first open, the
 * check costs one pass over files that are about to be read anyway, and that pass leaves them in the page cache for
 * the chunk reads that follow. Length and presence are checked here (a stat per file).
 *
 * <p>Runs once, on the starting thread.
 */
public final class WorkerRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerRecovery.class);

    private final CommittedFileStore store;
    private final StorageManager storage;
    private final PartitionRegistry registry;
    private int restored;
    private int lost;
    private final Set<String> leftovers = new HashSet<>();

    public WorkerRecovery(CommittedFileStore store, StorageManager storage, PartitionRegistry registry) {
        this.store = store;
        this.storage = storage;
        this.registry = registry;
    }

    public WorkerRecovery run() {
        Set<String> recorded = new HashSet<>();
        for (CommittedFileRecord r : store.loadAll()) {
            Disk disk = storage.disk(r.mountPoint());
            File f = new File(r.path());
            // An empty partition has no file at all.
            String why = disk == null
                    ? "its storage directory " + r.mountPoint() + " is not one of this worker's"
                    : r.length() == 0
                            ? (f.exists() && f.length() != 0
                                    ? "it holds " + f.length() + " bytes, none recorded"
                                    : null)
                            : !f.isFile()
                                    ? "its file is missing"
                                    : f.length() != r.length()
                                            ? "it holds " + f.length() + " bytes, " + r.length() + " recorded"
                                            : null;
            CommittedFile file;
            if (why != null) {
                LOG.warn("Committed {} is lost: {}; readers are told so and use its other copy", r, why);
                file = CommittedFile.lostAtRestart(
                        f, r.chunkOffsets(), r.length(), disk, r.contents(), why + " after a restart");
                lost++;
            } else {
                file = CommittedFile.restored(f, r.chunkOffsets(), r.length(), disk, r.contents());
                restored++;
            }
            registry.restoreCommitted(r.shuffleKey(), r.partitionId(), r.epoch(), file);
            recorded.add(r.shuffleKey());
        }
        File metaDir = store.dir().getAbsoluteFile();
        for (Disk d : storage.disks()) {
            File[] apps = d.dir().listFiles(File::isDirectory);
            if (apps == null) continue;
            for (File app : apps) {
                if (app.equals(metaDir) || app.getName().startsWith(".")) continue;
                File[] shuffles = app.listFiles(File::isDirectory);
                if (shuffles == null) continue;
                for (File sh : shuffles) {
                    int shuffleId;
                    try {
                        shuffleId = Integer.parseInt(sh.getName());
                    } catch (NumberFormatException e) {
                        continue; // not ours
                    }
                    String key = ShuffleKey.of(app.getName(), shuffleId);
                    registry.holdLeftovers(key);
                    if (!recorded.contains(key)) leftovers.add(key);
                }
            }
        }
        LOG.info(
                "Recovered {} committed partition files (checked against their checksums when first read), {} lost; "
                        + "{} shuffles without records held until the master expires them: {}",
                restored,
                lost,
                leftovers.size(),
                leftovers);
        return this;
    }

    public int restored() {
        return restored;
    }

    /** Recorded files found missing, of another length or on an unknown disk: served as lost. */
    public int lost() {
        return lost;
    }

    /** Shuffles with files on disk but no record: kept until the master says they expired. */
    public Set<String> leftovers() {
        return leftovers;
    }
}
