package io.estuary.worker.partition;

import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.util.ShuffleKey;
import io.estuary.worker.storage.CommittedFile;
import io.estuary.worker.storage.PartitionFileWriter;
import io.estuary.worker.storage.StorageManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The slots this worker holds: per shuffle, the writer of each reserved location, the replica it forwards to (for a
 * primary with a peer), and the files committed so far. Thread-safe (concurrent maps; a location's entries are
 * written once at reservation). The {@link Listener} is called on the committing or removing thread.
 */
public final class PartitionRegistry {
    private final StorageManager storage;
    private final Map<String, ShuffleSlots> shuffles = new ConcurrentHashMap<>();
    private volatile Listener listener = Listener.NONE;

    /** Told of every commit and removal, e.g. to keep a durable record of committed files. */
    public interface Listener {
        Listener NONE = new Listener() {
            @Override
            public void committed(String shuffleKey, int partitionId, int epoch, CommittedFile file) {}

            @Override
            public void removed(String shuffleKey) {}
        };

        /** Tells each of {@code listeners}, in order. */
        static Listener all(Listener... listeners) {
            return new Listener() {
                @Override
                public void committed(String shuffleKey, int partitionId, int epoch, CommittedFile file) {
                    for (Listener l : listeners) l.committed(shuffleKey, partitionId, epoch, file);
                }

                @Override
                public void removed(String shuffleKey) {
                    for (Listener l : listeners) l.removed(shuffleKey);
                }
            };
        }

        void committed(String shuffleKey, int partitionId, int epoch, CommittedFile file);

        /** Called before the shuffle's files are deleted. */
        void removed(String shuffleKey);
    }

    /** An open (reserved, not yet committed) location. */
    public static final class OpenSlot {
        public final String shuffleKey;
        public final int partitionId;
        public final int epoch;
        public final PartitionFileWriter writer;

        OpenSlot(String shuffleKey, long slot, PartitionFileWriter writer) {
            this.shuffleKey = shuffleKey;
            this.partitionId = (int) (slot >>> 32);
            this.epoch = (int) slot;
            this.writer = writer;
        }
    }

    private static final class ShuffleSlots {
        final Map<Long, PartitionFileWriter> writers = new ConcurrentHashMap<>();
        final Map<Long, CommittedFile> committed = new ConcurrentHashMap<>();
        final Map<Long, PartitionLocation> replicas = new ConcurrentHashMap<>();
        /** Locations this worker holds as the replica copy. */
        final java.util.Set<Long> replicaCopies = ConcurrentHashMap.newKeySet();
    }

    public PartitionRegistry(StorageManager storage) {
        this.storage = storage;
    }

    public void setListener(Listener listener) {
        this.listener = listener;
    }

    private static long key(int partitionId, int epoch) {
        return ((long) partitionId << 32) | (epoch & 0xffffffffL);
    }

    /**
     * Reserves the locations. A location reserved before keeps its writer (a driver may retry); where it forwards to
     * is what the newest reservation says.
     */
    public void reserve(String appId, int shuffleId, List<PartitionLocation> locations) {
        String shuffleKey = ShuffleKey.of(appId, shuffleId);
        ShuffleSlots slots = shuffles.computeIfAbsent(shuffleKey, k -> new ShuffleSlots());
        for (PartitionLocation loc : locations) {
            // A driver that re-places a shuffle (some worker refused) reserves again with other peers: the newest wins.
            long slot = key(loc.getPartitionId(), loc.getEpoch());
            if (loc.getRole() == io.estuary.common.protocol.LocationRole.REPLICA) {
                slots.replicaCopies.add(slot);
            } else {
                slots.replicaCopies.remove(slot);
            }
            if (loc.getRole() == io.estuary.common.protocol.LocationRole.PRIMARY && loc.hasPeer()) {
                slots.replicas.put(slot, loc.getPeer());
            } else {
                slots.replicas.remove(slot);
            }
            PartitionFileWriter writer = slots.writers.computeIfAbsent(key(loc.getPartitionId(), loc.getEpoch()), k -> {
                PartitionFileWriter w =
                        storage.newWriter(appId, shuffleId, loc.getPartitionId(), loc.getEpoch(), loc.getDisk());
                w.disk().activeSlots().incrementAndGet();
                return w;
            });
            boolean replica = loc.getRole() == io.estuary.common.protocol.LocationRole.REPLICA;
            writer.directIo(storage.directAlignment(writer, replica));
            // A replica copy waits in memory until the room is needed; a replicated primary only until written.
            if (replica) {
                writer.holdInMemory(storage.replicaHold(), shuffleKey, false);
            } else {
                writer.holdInMemory(loc.hasPeer() ? storage.primaryHold() : null, shuffleKey, true);
            }
        }
    }

    /**
     * Refuses ({@code DISK_FAILED}) locations of a driver's slot lease that name a disk of this worker that cannot take
     * data (failed or full since the lease), instead of moving them to another disk: the driver then asks the master.
     */
    public void refuseUnwritableDisks(List<PartitionLocation> locations) {
        for (PartitionLocation loc : locations) {
            io.estuary.worker.storage.Disk d = storage.disk(loc.getDisk());
            if (d == null || !d.writable()) {
                throw new io.estuary.common.status.StatusException(
                        io.estuary.common.status.StatusCode.DISK_FAILED,
                        "disk " + loc.getDisk() + " of this worker cannot take data ("
                                + (d == null ? "no such disk" : d.status())
                                + "): a slot lease named it; ask the master");
            }
        }
    }

    /** The writer of a reserved location, or null. */
    public PartitionFileWriter writer(String shuffleKey, int partitionId, int epoch) {
        ShuffleSlots slots = shuffles.get(shuffleKey);
        return slots == null ? null : slots.writers.get(key(partitionId, epoch));
    }

    /** Where a primary location forwards its pushes, or null (a replica, or no replication). */
    public PartitionLocation replicaOf(String shuffleKey, int partitionId, int epoch) {
        ShuffleSlots slots = shuffles.get(shuffleKey);
        return slots == null ? null : slots.replicas.get(key(partitionId, epoch));
    }

    /** Whether this worker holds the location as a replica copy (its pushes come from the primary's worker). */
    public boolean isReplicaCopy(String shuffleKey, int partitionId, int epoch) {
        ShuffleSlots slots = shuffles.get(shuffleKey);
        return slots != null && slots.replicaCopies.contains(key(partitionId, epoch));
    }

    public void committed(String shuffleKey, int partitionId, int epoch, CommittedFile file) {
        ShuffleSlots slots = shuffles.get(shuffleKey);
        if (slots == null) return;
        if (slots.committed.put(key(partitionId, epoch), file) != null) return; // committed again: counted already
        PartitionFileWriter w = slots.writers.get(key(partitionId, epoch));
        if (w != null) w.disk().activeSlots().decrementAndGet();
        listener.committed(shuffleKey, partitionId, epoch, file);
    }

    /** Registers a file committed by an earlier run of this worker (after a restart), so it is served again. */
    public void restoreCommitted(String shuffleKey, int partitionId, int epoch, CommittedFile file) {
        shuffles.computeIfAbsent(shuffleKey, k -> new ShuffleSlots()).committed.put(key(partitionId, epoch), file);
    }

    /**
     * Holds a shuffle whose files an earlier run left on disk without a record: it is reported to the master like any
     * other, and deleted only when the master says it expired ({@link #remove}).
     */
    public void holdLeftovers(String shuffleKey) {
        shuffles.computeIfAbsent(shuffleKey, k -> new ShuffleSlots());
    }

    /** Every reserved location not committed yet. */
    public List<OpenSlot> openSlots() {
        List<OpenSlot> out = new ArrayList<>();
        for (Map.Entry<String, ShuffleSlots> s : shuffles.entrySet()) {
            for (Map.Entry<Long, PartitionFileWriter> w : s.getValue().writers.entrySet()) {
                if (!s.getValue().committed.containsKey(w.getKey()))
                    out.add(new OpenSlot(s.getKey(), w.getKey(), w.getValue()));
            }
        }
        return out;
    }

    public CommittedFile committedFile(String shuffleKey, int partitionId, int epoch) {
        ShuffleSlots slots = shuffles.get(shuffleKey);
        return slots == null ? null : slots.committed.get(key(partitionId, epoch));
    }

    public boolean hasShuffle(String shuffleKey) {
        return shuffles.containsKey(shuffleKey);
    }

    /**
     * What this worker holds of each shuffle: bytes written or buffered (a committed file's length, an open writer's
     * size) and partition files, every location copy counted, for the masters' quotas.
     */
    public List<io.estuary.common.protocol.ShuffleUsage> usage() {
        List<io.estuary.common.protocol.ShuffleUsage> out = new ArrayList<>();
        for (Map.Entry<String, ShuffleSlots> s : shuffles.entrySet()) {
            long bytes = 0;
            int files = 0;
            for (CommittedFile f : s.getValue().committed.values()) { // recovered ones have no writer
                bytes += f.length();
                files++;
            }
            for (Map.Entry<Long, PartitionFileWriter> w : s.getValue().writers.entrySet()) {
                if (s.getValue().committed.containsKey(w.getKey())) continue;
                bytes += w.getValue().size();
                files++;
            }
            out.add(io.estuary.common.protocol.ShuffleUsage.newBuilder()
                    .setShuffleKey(s.getKey())
                    .setBytes(bytes)
                    .setFiles(files)
                    .build());
        }
        return out;
    }

    public List<String> shuffleKeys() {
        return new ArrayList<>(shuffles.keySet());
    }

    /**
     * Drops the data every writer still buffers (the worker closes without committing, as after a crash, but the
     * process lives on and must not keep the memory). Files stay; call once nothing pushes any more.
     */
    public void close() {
        for (ShuffleSlots s : shuffles.values()) {
            for (PartitionFileWriter w : s.writers.values()) w.close();
        }
    }

    /**
     * Writes the copies held in memory to their files (a graceful stop: the records of their commits say the
     * files are there); completes when every one is written or failed.
     */
    public java.util.concurrent.CompletableFuture<Void> writeHeldCopies() {
        return storage.cache().writeBackHeld();
    }

    /** Forgets a shuffle and deletes its data. */
    public void remove(String shuffleKey) {
        ShuffleSlots slots = shuffles.remove(shuffleKey);
        if (slots != null) {
            for (Map.Entry<Long, PartitionFileWriter> e : slots.writers.entrySet()) {
                if (!slots.committed.containsKey(e.getKey()))
                    e.getValue().disk().activeSlots().decrementAndGet();
                e.getValue().destroy();
            }
        }
        // After the writers are destroyed: a commit running meanwhile has put its held copy in the cache by now, or
        // never will, so the cache's removal catches it.
        listener.removed(shuffleKey);
        storage.deleteShuffle(ShuffleKey.appId(shuffleKey), ShuffleKey.shuffleId(shuffleKey));
    }
}
