package io.estuary.worker.meta;

import io.estuary.common.util.ShuffleKey;
import io.estuary.worker.PartitionRegistry;
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
 *       registered as committed, so it is served again; a record whose file is gone, shorter or longer, or on a
 *       storage directory this worker no longer has, is dropped;</li>
 *   <li>every shuffle directory ({@code <dir>/<appId>/<shuffleId>}) is held as the shuffle's, recorded or not, so
 *       files a crash left behind are reported to the master with the other shuffle keys and deleted only when the
 *       master says their shuffle expired. Nothing is deleted here.</li>
 * </ul>
 * Runs once, on the starting thread.
 */
public final class WorkerRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerRecovery.class);

  private final CommittedFileStore store;
  private final StorageManager storage;
  private final PartitionRegistry registry;
  private int restored;
  private int dropped;
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
      boolean intact = disk != null && (r.length() == 0 ? !f.exists() || f.length() == 0 : f.isFile()
          && f.length() == r.length());
      if (!intact) {
        LOG.warn("Dropping the record of {}: the file is missing, has another length or is on an unknown disk", r);
        dropped++;
        continue;
      }
      registry.restoreCommitted(r.shuffleKey(), r.partitionId(), r.epoch(),
          new CommittedFile(f, r.chunkOffsets(), r.length(), disk));
      recorded.add(r.shuffleKey());
      restored++;
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
    LOG.info("Recovered {} committed partition files ({} records dropped); {} shuffles without records held until "
        + "the master expires them: {}", restored, dropped, leftovers.size(), leftovers);
    return this;
  }

  public int restored() {
    return restored;
  }

  public int dropped() {
    return dropped;
  }

  /** Shuffles with files on disk but no record: kept until the master says they expired. */
  public Set<String> leftovers() {
    return leftovers;
  }
}
