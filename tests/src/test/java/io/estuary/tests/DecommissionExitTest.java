package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.UnregisterShuffleRequest;
import io.estuary.common.protocol.WorkerState;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.network.rpc.MasterClient;
import io.estuary.testing.Waits;
import io.estuary.testing.process.WorkerProcesses;
import io.estuary.worker.MiniCluster;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A decommissioned worker process, as sbin/ runs it, drains and then exits by itself (status 0, after its graceful
 * stop): it stays up while it holds a shuffle, and goes once the master says the shuffle is gone.
 */
class DecommissionExitTest {
    private static final String APP = "app-decommission-exit";

    @Test
    void aDecommissionedWorkerProcessExitsOnceDrained() throws Exception {
        // Permissive: the test reserves slots for an application by hand, which then registers without a secret.
        try (MiniCluster master = new MiniCluster(
                        0,
                        1,
                        io.estuary.testing.ClusterSecrets.enable(
                                        new EstuaryConf(), io.estuary.testing.ClusterSecrets.shared())
                                .set(io.estuary.common.config.AuthConfig.MODE, "permissive"));
                WorkerProcesses workers = new WorkerProcesses(1, master.masterEndpoint());
                // Acting for the servers (authentication is on by default in the harness).
                TransportClientFactory clients = master.clusterClients("decommission-test")) {
            workers.awaitRegistered(() -> master.master().state(s -> s.workers().size()));
            MasterClient rpc = new MasterClient(clients, Collections.singletonList(master.masterEndpoint()));
            // The worker holds a shuffle: its slots are reserved on it.
            rpc.ask(
                    Request.newBuilder()
                            .setApplicationHeartbeat(
                                    ApplicationHeartbeatRequest.newBuilder().setAppId(APP)),
                    Empty.parser(),
                    10_000);
            for (PartitionLocation l : rpc.ask(
                            Request.newBuilder()
                                    .setRequestSlots(RequestSlotsRequest.newBuilder()
                                            .setAppId(APP)
                                            .setShuffleId(0)
                                            .setNumPartitions(2)),
                            RequestSlotsResponse.parser(),
                            10_000)
                    .getLocationsList()) {
                ControlClient.ask(
                        clients.client(l.getWorker().getHost(), l.getWorker().getRpcPort()),
                        Request.newBuilder()
                                .setReserveSlots(ReserveSlotsRequest.newBuilder()
                                        .setAppId(APP)
                                        .setShuffleId(0)
                                        .addLocations(l)),
                        Empty.parser());
            }

            // An operator decommissions it (what the master's admin API and CLI do); it learns so at its next
            // heartbeat.
            master.master().setWorkerState(workers.workerId(0), WorkerState.WORKER_DECOMMISSIONING, "test");
            Process p = workers.process(0);
            await(
                    () -> workers.log(0).contains("Decommissioning: no new slots"),
                    "the worker starts draining",
                    p,
                    workers);
            assertFalse(
                    p.waitFor(3, TimeUnit.SECONDS),
                    "the worker exited while it still held a shuffle:\n" + workers.log(0));

            rpc.ask(
                    Request.newBuilder()
                            .setUnregisterShuffle(UnregisterShuffleRequest.newBuilder()
                                    .setAppId(APP)
                                    .setShuffleId(0)),
                    Empty.parser(),
                    10_000);
            assertTrue(
                    p.waitFor(60, TimeUnit.SECONDS), "the drained worker did not exit within 60 s:\n" + workers.log(0));
            String log = workers.log(0);
            assertEquals(0, p.exitValue(), log);
            assertTrue(log.contains("Decommissioning done"), log);
            // The exit ran the graceful stop (the shutdown hook), which told the master the worker is going.
            assertEquals(
                    WorkerState.WORKER_SHUTTING_DOWN,
                    master.master().state(st -> st.workerState(workers.workerId(0))),
                    log);
        }
    }

    private interface Check {
        boolean ok() throws Exception;
    }

    /** Waits (bounded) until {@code condition}; fails at once, with the worker's log, when the worker exits first. */
    private static void await(Check condition, String what, Process p, WorkerProcesses workers) throws Exception {
        try {
            Waits.waitFor(
                    () -> {
                        try {
                            if (condition.ok()) return true;
                            if (!p.isAlive()) {
                                fail("the worker exited (" + p.exitValue() + ") before " + what + ":\n"
                                        + workers.log(0));
                            }
                            return false;
                        } catch (AssertionError e) {
                            throw e;
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    60_000,
                    what);
        } catch (AssertionError e) {
            if (e.getMessage().startsWith("the worker exited")) throw e;
            fail(e.getMessage() + ":\n" + workers.log(0));
        }
    }
}
