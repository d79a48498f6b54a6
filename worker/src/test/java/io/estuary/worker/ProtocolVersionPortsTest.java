package io.estuary.worker;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.ProtocolVersion;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import java.util.Collections;
import org.junit.jupiter.api.Test;

/**
 * Clients of another protocol version, on every port of a real master and worker (control, push, fetch): refused
 * at connect with a message naming both versions, while clients of the servers' version go on being served.
 */
class ProtocolVersionPortsTest {

    @Test
    void everyPortRefusesAnotherVersionAtConnectAndServesItsOwn() throws Exception {
        // Permissive: the test sends an application's requests by hand, never registering its secret.
        try (MiniCluster cluster =
                new MiniCluster(1, 1, new EstuaryConf().set(io.estuary.common.config.AuthConfig.MODE, "permissive"))) {
            cluster.awaitWorkers(1);
            WorkerAddress w = cluster.workers().get(0).address();
            String[] master = cluster.masterEndpoint().split(":");
            String[][] ports = {
                {"master rpc", master[0], master[1]},
                {"worker rpc", w.getHost(), String.valueOf(w.getRpcPort())},
                {"worker push", w.getHost(), String.valueOf(w.getPushPort())},
                {"worker fetch", w.getHost(), String.valueOf(w.getFetchPort())}
            };
            for (int other : new int[] {ProtocolVersion.OLDEST - 1, ProtocolVersion.CURRENT + 1}) {
                try (TransportClientFactory old =
                        new TransportClientFactory(cluster.clientConf(), "other-version", other)) {
                    for (String[] p : ports) {
                        RemoteException e = assertThrows(
                                RemoteException.class, () -> old.client(p[1], Integer.parseInt(p[2])), p[0]);
                        assertEquals(StatusCode.VERSION_MISMATCH, e.status(), p[0] + ": " + e.getMessage());
                        assertTrue(
                                e.getMessage().contains("protocol " + other)
                                        && e.getMessage().contains("protocol " + ProtocolVersion.CURRENT),
                                p[0] + ": " + e.getMessage());
                    }
                }
            }
            try (TransportClientFactory same = cluster.clusterClients("same-version")) {
                for (String[] p : ports)
                    assertTrue(same.client(p[1], Integer.parseInt(p[2])).isActive(), p[0]);
                MasterClient m = new MasterClient(same, Collections.singletonList(cluster.masterEndpoint()));
                // The master still answers requests of its own version.
                m.ask(
                        Request.newBuilder()
                                .setApplicationHeartbeat(
                                        ApplicationHeartbeatRequest.newBuilder().setAppId("app")),
                        Empty.parser(),
                        10_000);
            }
        }
    }
}
