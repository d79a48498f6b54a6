package io.estuary.network.rpc;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.Request;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.testing.ManualClock;
import io.estuary.testing.Waits;
import io.estuary.testing.process.FreePorts;
import java.time.Duration;
import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * {@link MasterClient} gives up on unreachable masters when its clock passes the caller's wait, and not before: with a
 * manual clock and a wait of an hour, it fails only because the test moves the clock, never because real time passed.
 */
class MasterClientClockTest {
    @Test
    void givesUpWhenItsClockPassesTheWait() throws Exception {
        ManualClock clock = new ManualClock();
        long start = clock.nanos();
        long waitMs = Duration.ofHours(1).toMillis();
        String nobody = "127.0.0.1:" + FreePorts.take(1)[0];
        try (TransportClientFactory clients = new TransportClientFactory(new EstuaryConf(), "clock-test")) {
            MasterClient master = new MasterClient(clients, Collections.singletonList(nobody), clock);
            CompletableFuture<Empty> asked = CompletableFuture.supplyAsync(() -> {
                try {
                    return master.ask(
                            Request.newBuilder()
                                    .setApplicationHeartbeat(ApplicationHeartbeatRequest.newBuilder()
                                            .setAppId("probe")),
                            Empty.parser(),
                            waitMs);
                } catch (RemoteException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            // An hour of the client's time passes in minutes of the test's: the client must go by its clock.
            Waits.waitFor(
                    () -> {
                        if (!asked.isDone()) clock.advance(Duration.ofMinutes(1));
                        return asked.isDone();
                    },
                    Duration.ofSeconds(60),
                    "the client gives up on an unreachable master");
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, asked::get);
            assertInstanceOf(RemoteException.class, e.getCause());
            assertTrue(
                    e.getCause().getMessage().contains("no master reachable"),
                    e.getCause().getMessage());
            assertTrue(
                    clock.nanos() - start >= Duration.ofMillis(waitMs).toNanos(),
                    "it gave up only after its clock passed the wait");
        }
    }
}
