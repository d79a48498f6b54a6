package io.estuary.worker.fetch;

import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.PartitionCache;
import java.util.concurrent.RejectedExecutionException;

/**
 * Puts small partitions into the {@link PartitionCache} as they are committed, and drops a shuffle's entries when
 * the shuffle is removed. The file is read once, right after its commit, on its disk's reader threads (it was just
 * written, so usually from the page cache); the commit does not wait for it, and a reader that comes first reads
 * the file from disk. Replica copies are not cached: readers go to them only when the primary is gone.
 *
 * <p>Thread-safe; called on the committing and removing threads and never blocks them.
 */
public final class CacheFiller implements PartitionRegistry.Listener {
    private final PartitionCache cache;
    private final PartitionRegistry registry;

    public CacheFiller(PartitionCache cache, PartitionRegistry registry) {
        this.cache = cache;
        this.registry = registry;
    }

    @Override
    public void committed(String shuffleKey, int partitionId, int epoch, CommittedFile file) {
        if (registry.isReplicaCopy(shuffleKey, partitionId, epoch)) return;
        if (file.lostReason() != null || !cache.startFill(shuffleKey, file)) return;
        try {
            StreamRegistry.readersOf(file).execute(() -> cache.fill(file));
        } catch (RejectedExecutionException e) { // the worker is shutting down
            cache.abandonFill(file);
        }
    }

    @Override
    public void removed(String shuffleKey) {
        cache.removeShuffle(shuffleKey);
    }
}
