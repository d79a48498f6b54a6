package io.estuary.client.read;

import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.GetReducerFileGroupResponse;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.time.Clock;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Where each shuffle's partitions were committed, asked of the driver once per process instead of once per reading
 * task, the way an engine caches where its own map outputs are. The first reader of a shuffle asks for every
 * partition and every map; later readers of any partition range take their part of that answer. Readers of part of
 * the maps (a skewed partition split by map) ask the driver themselves: their expected counts differ.
 *
 * <p>An answer is kept under the engine's epoch of map outputs, which the engine raises whenever map outputs are lost
 * or a stage is rerun (for Spark, the map output tracker's epoch, as the executor learns it from each task). A reader
 * under a newer epoch asks again, so no reader ever takes a file group from before a rerun it runs after. A failed
 * lookup is not kept: the next reader asks again.
 *
 * <p>Bounded: shuffles with more than {@code maxPartitions} partitions are not cached (each answer is about a hundred
 * bytes per partition), and at most {@code maxShuffles} answers are kept, the least recently used going first.
 * Thread-safe; concurrent first readers of a shuffle share one lookup.
 */
public final class FileGroupCache {
    /** How a file group is asked of the driver. */
    public interface Lookup {
        GetReducerFileGroupResponse ask(int startPartition, int endPartition, int startMap, int endMap)
                throws RemoteException;
    }

    private static final class Kept {
        final long epoch;
        final CompletableFuture<GetReducerFileGroupResponse> answer = new CompletableFuture<>();

        Kept(long epoch) {
            this.epoch = epoch;
        }
    }

    private final int maxPartitions;
    /** By application and engine shuffle id ("app/7"): a process may read for several applications. */
    private final Map<String, Kept> entries;

    private long lookups;
    private long hits;

    public FileGroupCache(int maxPartitions, int maxShuffles) {
        this.maxPartitions = maxPartitions;
        this.entries = new LinkedHashMap<String, Kept>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Kept> eldest) {
                return size() > maxShuffles;
            }
        };
    }

    /**
     * Partitions [start, end) of maps [startMap, endMap) of {@code spec}, read under engine epoch {@code epoch}: from
     * the kept answer when it is of this epoch, else asked of the driver through {@code lookup}.
     */
    public GetReducerFileGroupResponse get(
            ShuffleSpec spec, long epoch, int start, int end, int startMap, int endMap, Lookup lookup)
            throws RemoteException {
        boolean allMaps = startMap == 0 && (endMap <= 0 || endMap >= spec.numMappers);
        boolean inRange = 0 <= start && start <= end && end <= spec.numPartitions; // else the driver says what is wrong
        if (!allMaps || !inRange || spec.numPartitions > maxPartitions || spec.numPartitions <= 0) {
            return lookup.ask(start, end, startMap, endMap);
        }
        String key = key(spec);
        Kept e;
        boolean mine = false;
        synchronized (this) {
            lookups++;
            e = entries.get(key);
            if (e == null || e.epoch < epoch || e.answer.isCompletedExceptionally()) {
                e = new Kept(epoch);
                entries.put(key, e);
                mine = true;
            } else if (e.epoch > epoch) {
                e = null; // a reader under an older epoch than one seen: it may predate a rerun, so it asks itself
            } else {
                hits++;
            }
        }
        if (e == null) return lookup.ask(start, end, startMap, endMap); // not under the lock: it waits for a commit
        if (mine) {
            try {
                e.answer.complete(lookup.ask(0, spec.numPartitions, 0, spec.numMappers));
            } catch (RemoteException | RuntimeException ex) {
                e.answer.completeExceptionally(ex);
                forget(key, e);
                throw ex;
            }
        }
        return slice(await(e), start, end);
    }

    /**
     * {@code process} as a task under engine epoch {@code epoch} sees it: where partitions are comes from this cache,
     * asked through {@code process} when not kept.
     */
    public ReaderPort portFor(ReaderPort process, long epoch) {
        return new ReaderPort() {
            @Override
            public EstuaryConf conf() {
                return process.conf();
            }

            @Override
            public Clock clock() {
                return process.clock();
            }

            @Override
            public GetReducerFileGroupResponse reducerFiles(ShuffleSpec spec, int start, int end, int sm, int em)
                    throws RemoteException {
                return get(spec, epoch, start, end, sm, em, (s, e, m, n) -> process.reducerFiles(spec, s, e, m, n));
            }

            @Override
            public void fileGroupUnreadable(ShuffleSpec spec) {
                forget(spec);
            }

            @Override
            public TransportClient fetchClient(String appId, WorkerAddress worker) throws RemoteException {
                return process.fetchClient(appId, worker);
            }
        };
    }

    /** Drops what is kept of {@code spec}'s shuffle: its files are not where the answer says. */
    public synchronized void forget(ShuffleSpec spec) {
        entries.remove(key(spec));
    }

    /** Drops what is kept of engine shuffle {@code shuffleId}, of any application: the shuffle was removed. */
    public synchronized void forget(int shuffleId) {
        String suffix = "/" + shuffleId;
        entries.keySet().removeIf(k -> k.endsWith(suffix));
    }

    private synchronized void forget(String key, Kept e) {
        entries.remove(key, e);
    }

    private static String key(ShuffleSpec spec) {
        return spec.appId + "/" + spec.shuffleId;
    }

    /** Lookups of whole-map reads so far, and how many of them the kept answers served. */
    public synchronized long[] lookupsAndHits() {
        return new long[] {lookups, hits};
    }

    private static GetReducerFileGroupResponse await(Kept e) throws RemoteException {
        try {
            return e.answer.get();
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new RemoteException(
                    io.estuary.common.status.StatusCode.RETRY_LATER, "interrupted while waiting for a file group", ie);
        } catch (ExecutionException ee) {
            Throwable c = ee.getCause();
            if (c instanceof RemoteException) throw (RemoteException) c;
            if (c instanceof RuntimeException) throw (RuntimeException) c;
            throw new IllegalStateException(c);
        }
    }

    /** Partitions [start, end) of an answer for every partition (the answer's i-th partition is partition i). */
    static GetReducerFileGroupResponse slice(GetReducerFileGroupResponse all, int start, int end) {
        if (start == 0 && end == all.getPartitionsCount()) return all;
        GetReducerFileGroupResponse.Builder b = GetReducerFileGroupResponse.newBuilder()
                .setEstuaryShuffleId(all.getEstuaryShuffleId())
                .setIntegrityChecked(all.getIntegrityChecked())
                .setBatchCountsOnly(all.getBatchCountsOnly())
                .addAllMapAttempts(all.getMapAttemptsList());
        b.addAllPartitions(all.getPartitionsList().subList(start, end));
        return b.build();
    }
}
