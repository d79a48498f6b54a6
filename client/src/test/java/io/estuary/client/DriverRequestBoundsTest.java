package io.estuary.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.RegisterShuffleRequest;
import io.estuary.common.protocol.RegisterShuffleResponse;
import io.estuary.common.protocol.Request;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import io.estuary.worker.MiniCluster;
import org.junit.jupiter.api.Test;

/**
 * The driver's lifecycle server refuses shuffles over the configured size with BAD_REQUEST naming the limit, and
 * serves the same executor connection on.
 */
class DriverRequestBoundsTest {

    private static Request.Builder register(int shuffle, int mappers, int partitions) {
        return Request.newBuilder()
                .setRegisterShuffle(RegisterShuffleRequest.newBuilder()
                        .setShuffleId(shuffle)
                        .setNumMappers(mappers)
                        .setNumPartitions(partitions));
    }

    @Test
    void oversizedShufflesAreRefusedAndTheDriverServesOn() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 1, new EstuaryConf())) {
            EstuaryConf conf = cluster.clientConf().set(NetworkConfig.MAX_PARTITIONS, "1000");
            LifecycleManager driver = new LifecycleManager("app-driver-bounds", conf, "127.0.0.1");
            try (TransportClientFactory clients = new TransportClientFactory(
                    conf,
                    "executor",
                    io.estuary.network.auth.Credentials.application(driver.appId(), driver.applicationSecret()))) {
                TransportClient c = clients.client("127.0.0.1", driver.port());
                RemoteException e = assertThrows(
                        RemoteException.class,
                        () -> ControlClient.ask(c, register(0, 2, 1001), RegisterShuffleResponse.parser()));
                assertEquals(StatusCode.BAD_REQUEST, e.status());
                assertTrue(
                        e.getMessage()
                                .contains("refuses the request: register_shuffle.num_partitions is 1001, more "
                                        + "than estuary.network.request.maxPartitions (1000) allows"),
                        e.getMessage());

                e = assertThrows(
                        RemoteException.class,
                        () -> ControlClient.ask(c, register(0, 100_001, 3), RegisterShuffleResponse.parser()));
                assertEquals(StatusCode.BAD_REQUEST, e.status());
                assertTrue(
                        e.getMessage()
                                .contains("register_shuffle.num_mappers is 100001, more than "
                                        + "estuary.network.request.maxMappers (100000) allows"),
                        e.getMessage());

                RegisterShuffleResponse ok = ControlClient.ask(c, register(0, 2, 3), RegisterShuffleResponse.parser());
                assertEquals(3, ok.getLocationsCount(), "the same connection is served afterwards");
            } finally {
                driver.close();
            }
        }
    }
}
