package io.estuary.client.engine;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.fail;

import io.estuary.client.ShuffleClient;
import io.estuary.client.ShuffleServices;
import org.junit.jupiter.api.Test;

class ShuffleServicesLeaseTest {
    private static ShuffleServices services() {
        return new ShuffleServices(io.estuary.testing.ClusterSecrets.clientWithApplicationSecret(), () -> {
            throw new AssertionError("tasks never start a lifecycle manager");
        });
    }

    @Test
    void leasedClientLivesUntilTheLastLeaseIsReturned() {
        ShuffleServices s = services();
        ShuffleClient first = s.leaseClient();
        ShuffleClient second = s.leaseClient();
        assertSame(first, second, "tasks running together share one client");
        s.returnClient(first);
        assertSame(first, s.leaseClient(), "still leased by the second task");
        s.returnClient(first);
        s.returnClient(first);
        ShuffleClient fresh = s.leaseClient();
        assertNotSame(first, fresh, "the last return closed the client; a later task opens a fresh one");
        s.returnClient(first); // stale: ignored, the fresh client stays open
        assertSame(fresh, s.leaseClient());
        s.returnClient(fresh);
        s.returnClient(fresh);
        s.close();
    }

    @Test
    void processServicesAreMadeOnce() {
        ShuffleServices made = ProcessServices.get(ShuffleServicesLeaseTest::services);
        assertSame(made, ProcessServices.get(() -> {
            fail("the process already has its services");
            return null;
        }));
    }
}
