package io.estuary.worker.meta;

import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the metadata store in step with the registry: records each commit, forgets a shuffle before its files are
 * deleted. A failed write is logged, not thrown: the commit itself succeeded, and without its record the file is
 * only treated as a crash leftover after a restart (kept until its shuffle expires, then deleted). Thread-safe: it
 * holds no state of its own, and the store it writes is thread-safe (commit and expiry threads call it).
 */
public final class CommittedFileRecorder implements PartitionRegistry.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(CommittedFileRecorder.class);

    private final CommittedFileStore store;

    public CommittedFileRecorder(CommittedFileStore store) {
        this.store = store;
    }

    @Override
    public void committed(String shuffleKey, int partitionId, int epoch, CommittedFile file) {
        long[] offsets = new long[file.numChunks()];
        for (int i = 0; i < offsets.length; i++) offsets[i] = file.chunkOffset(i);
        try {
            store.put(new CommittedFileRecord(
                    shuffleKey,
                    partitionId,
                    epoch,
                    file.file().getAbsolutePath(),
                    file.disk().mountPoint(),
                    file.length(),
                    offsets,
                    file.contents()));
        } catch (RuntimeException e) {
            LOG.warn(
                    "Could not record committed {} partition {} epoch {}: {}",
                    shuffleKey,
                    partitionId,
                    epoch,
                    e.getMessage());
        }
    }

    @Override
    public void removed(String shuffleKey) {
        try {
            store.deleteShuffle(shuffleKey);
        } catch (RuntimeException e) {
            LOG.warn("Could not forget shuffle {} in the metadata store: {}", shuffleKey, e.getMessage());
        }
    }
}
