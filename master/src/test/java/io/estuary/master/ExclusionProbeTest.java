package io.estuary.master;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.RegisterWorkerRequest;
import io.estuary.common.protocol.ReportWorkerFailuresRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.RequestSlotsRequest;
import io.estuary.common.protocol.RequestSlotsResponse;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.protocol.WorkerState;
import io.estuary.master.state.WorkerId;
import io.estuary.network.auth.Credentials;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import io.estuary.testing.ClusterSecrets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The probe of issue 14 item 11 on a real master: a fault between two applications and the workers (a switch)
 * makes both report every worker. Before the cap every worker was excluded and every new shuffle failed "no
 * slots" for the exclusion's grace; now at most the configured fraction is, and new shuffles are placed.
 */
class ExclusionProbeTest {
    @TempDir
    Path tmp;

    private static WorkerAddress addr(int i) {
        return WorkerAddress.newBuilder()
                .setHost("127.0.1." + i)
                .setRpcPort(1)
                .setPushPort(2)
                .setFetchPort(3)
                .build();
    }

    @Test
    void twoApplicationsReportingEveryWorkerDoNotEmptyTheCluster() throws Exception {
        Path secret = ClusterSecrets.newFile(tmp);
        EstuaryConf conf = ClusterSecrets.enable(new EstuaryConf(), secret)
                // Permissive: the test registers applications implicitly, acting for them as the cluster.
                .set(AuthConfig.MODE, "permissive")
                .set(MasterConfig.PORT, "0")
                .set(MasterConfig.HTTP_PORT, "0")
                .set(MasterConfig.HOST, "127.0.0.1");
        try (Master m = new Master(conf, () -> {});
                // The test acts for the workers and the applications: it proves the cluster secret.
                TransportClientFactory clients = new TransportClientFactory(
                        new EstuaryConf(), "test", Credentials.cluster(ClusterSecrets.read(secret)))) {
            MasterClient c = new MasterClient(clients, List.of(m.endpoint()));
            List<WorkerAddress> all = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                all.add(addr(i));
                c.ask(
                        Request.newBuilder()
                                .setRegisterWorker(RegisterWorkerRequest.newBuilder()
                                        .setWorker(WorkerInfo.newBuilder()
                                                .setAddress(addr(i))
                                                .addDisks(DiskInfo.newBuilder().setMountPoint("/d1")))),
                        Empty.parser(),
                        30_000);
            }
            for (String app : new String[] {"app-a", "app-b"}) {
                c.ask(
                        Request.newBuilder()
                                .setReportWorkerFailures(ReportWorkerFailuresRequest.newBuilder()
                                        .setAppId(app)
                                        .addAllWorkers(all)
                                        .setReason("connection timed out")),
                        Empty.parser(),
                        30_000);
            }
            List<String> excluded = new ArrayList<>();
            for (WorkerAddress a : all) {
                if (m.state(s -> s.workerState(WorkerId.of(a))) == WorkerState.WORKER_EXCLUDED)
                    excluded.add(WorkerId.of(a));
            }
            System.out.printf(
                    "EXCLUSION PROBE (real master): 2 applications reported all 10 workers: %d excluded%n",
                    excluded.size());
            assertTrue(excluded.size() <= 3, excluded.size() + " of 10 workers excluded on reports alone: " + excluded);

            // A new shuffle of another application is placed, on workers that are not excluded.
            List<PartitionLocation> locs = c.ask(
                            Request.newBuilder()
                                    .setRequestSlots(RequestSlotsRequest.newBuilder()
                                            .setAppId("app-c")
                                            .setShuffleId(0)
                                            .setNumPartitions(20)
                                            .setReplicate(true)),
                            RequestSlotsResponse.parser(),
                            30_000)
                    .getLocationsList();
            assertEquals(20, locs.size());
            for (PartitionLocation l : locs) {
                assertFalse(excluded.contains(WorkerId.of(l.getWorker())), "placed on an excluded worker");
                assertFalse(excluded.contains(WorkerId.of(l.getPeer().getWorker())), "replica on an excluded worker");
            }
        }
    }
}
