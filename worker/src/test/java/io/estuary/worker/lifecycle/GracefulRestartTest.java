package io.estuary.worker.lifecycle;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.CommitFilesResponse;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.WorkerState;
import io.estuary.common.status.StatusCode;
import io.estuary.master.state.WorkerId;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.worker.MiniCluster;
import io.estuary.worker.Worker;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Restarts of a worker on its host, ports and disks (real master and worker on loopback): a graceful stop
 * commits its open locations and the new process serves everything again; after a crash, what was committed is
 * served again and files without a record stay until the master says their shuffle is gone; a committed file
 * changed while the worker was down (bytes altered, truncated, deleted) is reported lost, never served. Every
 * partition served is read back and checked (bytes and CRC32) against what was pushed.
 */
class GracefulRestartTest {

    private static EstuaryConf conf() {
        // Permissive: the test sends the applications' requests by hand, never registering their secrets.
        return new EstuaryConf()
                .set(io.estuary.common.config.AuthConfig.MODE, "permissive")
                .set(WorkerConfig.CHUNK_SIZE, "8k") // several chunks per partition
                .set(WorkerConfig.FLUSH_BUFFER_SIZE, "4k")
                .set(WorkerConfig.HEARTBEAT_INTERVAL, "200ms")
                .set(MasterConfig.LIVENESS_CHECK_INTERVAL, "200ms");
    }

    private static long dataFiles(File dir) {
        File[] children = dir.listFiles();
        if (children == null) return 0;
        long n = 0;
        for (File f : children)
            n += f.isDirectory() ? dataFiles(f) : f.getName().endsWith(".data") ? 1 : 0;
        return n;
    }

    @Test
    void gracefulStopCommitsOpenLocationsAndTheRestartedWorkerServesEverything() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 1, conf());
                TransportClientFactory clients = cluster.clusterClients("test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
            Worker before = cluster.workers().get(0);
            String id = WorkerId.of(before.address());
            RawShuffle s = new RawShuffle(clients, master, "app-restart", 0, 6);
            s.push(20);
            List<PartitionLocation> locs = s.locations;
            for (int p = 0; p < 3; p++) s.commitAndCheck(locs.get(p)); // stage-end commits of half of them
            // The other half is still open when the worker is asked to stop.
            Worker after = cluster.restartWorker(0, true);
            assertEquals(before.address(), after.address());
            assertEquals(WorkerState.WORKER_ACTIVE, after.state());
            waitFor(
                    () -> cluster.master().state(st -> st.workerState(id)) == WorkerState.WORKER_ACTIVE
                            && cluster.master().state(st -> st.workers().size()) == 1,
                    "the master sees the restarted worker ACTIVE");
            // The driver's stage-end commit of the locations that were open at the stop: committed, every byte there.
            for (int p = 3; p < 6; p++) s.commitAndCheck(locs.get(p));
            for (PartitionLocation l : locs) s.readAndCheck(l);
            // A second restart keeps it all (records of files committed at a stop survive like any other).
            cluster.restartWorker(0, true);
            for (PartitionLocation l : locs) s.readAndCheck(l);
            s.unregister();
            waitFor(
                    () -> dataFiles(cluster.root().toFile()) == 0
                            && !cluster.workers().get(0).registry().hasShuffle(s.key()),
                    "the shuffle's files are deleted once the master expires it");
            // Its records are gone too: another restart holds nothing.
            Worker third = cluster.restartWorker(0, true);
            assertTrue(
                    third.registry().shuffleKeys().isEmpty(),
                    third.registry().shuffleKeys().toString());
        }
    }

    @Test
    void committedFilesChangedWhileTheWorkerIsDownAreReportedLostAndTheOthersServed() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 1, conf());
                TransportClientFactory clients = cluster.clusterClients("test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
            RawShuffle s = new RawShuffle(clients, master, "app-changed", 0, 5);
            s.push(12);
            List<PartitionLocation> locs = s.locations;
            for (PartitionLocation l : locs) s.commitAndCheck(l);
            File[] files = new File[locs.size()];
            for (int p = 0; p < files.length; p++) {
                files[p] = cluster.workers()
                        .get(0)
                        .registry()
                        .committedFile(s.key(), p, locs.get(p).getEpoch())
                        .file();
            }
            Worker after = cluster.restartWorker(0, true, () -> {
                try {
                    try (RandomAccessFile f = new RandomAccessFile(files[0], "rw")) { // one byte altered, same length
                        long at = f.length() / 2;
                        f.seek(at);
                        int b = f.read();
                        f.seek(at);
                        f.write(b ^ 0x10);
                    }
                    try (RandomAccessFile f = new RandomAccessFile(files[1], "rw")) {
                        f.setLength(f.length() - 1);
                    }
                    assertTrue(files[2].delete());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            // Partitions 3 and 4 are untouched: served as before, checked against their recorded checksums.
            s.readAndCheck(locs.get(3));
            s.readAndCheck(locs.get(4));
            // The others are lost, however often they are asked for: the reader is told DISK_FAILED and reads a
            // replica.
            for (int round = 0; round < 2; round++) {
                for (int p = 0; p < 3; p++) {
                    int partition = p;
                    RemoteException e = assertThrows(
                            RemoteException.class,
                            () -> s.readAndCheck(locs.get(partition)),
                            "partition " + p + " was served");
                    assertEquals(StatusCode.DISK_FAILED, e.status(), e.getMessage());
                }
            }
            // The driver's stage-end commit is told the same (retried after the restart).
            for (int p = 0; p < 5; p++) {
                CommitFilesResponse r = s.commit(locs.get(p));
                assertEquals(p < 3 ? 0 : 1, r.getCommittedCount(), "partition " + p + ": " + r.getFailureReason());
            }
            assertTrue(after.registry().hasShuffle(s.key()));
            s.unregister();
            waitFor(
                    () -> dataFiles(cluster.root().toFile()) == 0
                            && !cluster.workers().get(0).registry().hasShuffle(s.key()),
                    "the shuffle's files are deleted once the master expires it");
        }
    }

    @Test
    void afterACrashCommittedFilesAreServedAndLeftoversStayUntilTheMasterSaysTheShuffleIsGone() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 1, conf());
                TransportClientFactory clients = cluster.clusterClients("test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
            RawShuffle committed = new RawShuffle(clients, master, "app-crash", 1, 3);
            committed.push(10);
            for (PartitionLocation l : committed.locations) committed.commitAndCheck(l);
            RawShuffle open = new RawShuffle(clients, master, "app-crash", 2, 3);
            open.push(10); // never committed: after the crash its files have no record
            // Each file is created ahead of its first flush, on the disk's flusher thread.
            waitFor(() -> dataFiles(cluster.root().toFile()) == 6, "the six partitions' files created");
            long files = 6;

            Worker after = cluster.restartWorker(0, false); // closed at once: nothing committed, as in a crash
            for (PartitionLocation l : committed.locations) committed.readAndCheck(l);
            assertTrue(after.registry().hasShuffle(open.key()), "leftovers are held, and reported to the master");
            // Several heartbeats: the master knows the application, so nothing is expired and nothing deleted.
            long beats = System.currentTimeMillis() + 1_500;
            while (System.currentTimeMillis() < beats) {
                assertEquals(
                        files,
                        dataFiles(cluster.root().toFile()),
                        "a leftover file was deleted before the master " + "said its shuffle is gone");
                Thread.sleep(100);
            }
            // A location the restarted worker holds no record of fails its commit, never skipped.
            CommitFilesResponse r = open.commit(open.locations.get(0));
            assertEquals(0, r.getCommittedCount());
            assertEquals(1, r.getUnknownCount());

            open.unregister();
            waitFor(
                    () -> dataFiles(cluster.root().toFile()) == 3
                            && !after.registry().hasShuffle(open.key()),
                    "the leftovers are deleted once the master says their shuffle is gone");
            for (PartitionLocation l : committed.locations) committed.readAndCheck(l);
        }
    }

    @Test
    void decommissionStopsNewSlotsAndEndsOnceTheShufflesHeldAreGone() throws Exception {
        try (MiniCluster cluster = new MiniCluster(2, 1, conf());
                TransportClientFactory clients = cluster.clusterClients("test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(cluster.masterEndpoint()));
            RawShuffle s = new RawShuffle(clients, master, "app-decom", 0, 4);
            Worker w = cluster.workers().get(0);
            String id = WorkerId.of(w.address());
            assertTrue(s.locations.stream().anyMatch(l -> l.getWorker().equals(w.address())), "placed on both workers");
            s.push(5);

            // An operator decommissions the worker on the master (what the admin API does); the worker learns it from
            // its heartbeat answer and starts draining.
            cluster.master().setWorkerState(id, WorkerState.WORKER_DECOMMISSIONING, "test");
            waitFor(() -> w.state() == WorkerState.WORKER_DECOMMISSIONING, "the worker drains");
            java.util.concurrent.CompletableFuture<Boolean> drained = w.decommission();
            // No new slots on it.
            RawShuffle next = new RawShuffle(clients, master, "app-decom", 1, 8);
            assertTrue(
                    next.locations.stream().noneMatch(l -> l.getWorker().equals(w.address())),
                    "slot on a draining worker");
            // The running shuffle goes on: more pushes, commit, reads.
            s.push(5);
            for (PartitionLocation l : s.locations) s.commitAndCheck(l);
            for (PartitionLocation l : s.locations) s.readAndCheck(l);
            assertFalse(drained.isDone(), "drained while a shuffle is held");
            s.unregister();
            assertTrue(drained.get(60, java.util.concurrent.TimeUnit.SECONDS));
            assertNotNull(w.stopGracefully());
            assertEquals(WorkerState.WORKER_SHUTTING_DOWN, cluster.master().state(st -> st.workerState(id)));
        }
    }
}
