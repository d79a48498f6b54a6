package io.estuary.client.engine;

import io.estuary.client.ShuffleClient;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.client.spec.ShuffleSpec;
import java.io.IOException;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class LostDataTest {
    @Test
    void lossNamingNoEstuaryShuffleIsNotReported() {
        ShuffleSpec spec = new ShuffleSpec("app", 3, 2, 2, "127.0.0.1", 1);
        // A null client would fail any report.
        LostData.report(null, spec, new ShuffleDataLostException(3, -1, 0, -1, "never resolved", null));
    }

    @Test
    void anUnreachableLifecycleManagerDoesNotFailTheReader() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        ShuffleSpec spec = new ShuffleSpec("app", 3, 2, 2, "127.0.0.1", closedPort);
        try (ShuffleClient client =
                new ShuffleClient(io.estuary.testing.ClusterSecrets.clientWithApplicationSecret())) {
            LostData.report(client, spec, new ShuffleDataLostException(3, 7, 0, 0, "epoch 0 lost", null));
        }
    }
}
