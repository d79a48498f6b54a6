package io.estuary.client.lifecycle;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.MasterClient;
import java.net.ServerSocket;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Registration bookkeeping against a master that does not answer (a port nothing listens on): the tasks of a shuffle
 * share one registration, and a failed one is forgotten so that a later task tries again.
 */
class ShuffleRegistrarTest {
    private final TransportClientFactory connections = new TransportClientFactory(new EstuaryConf(), "test");
    /** Registrations run only when the test says so. */
    private final Deque<Runnable> work = new ArrayDeque<>();

    private final List<List<WorkerAddress>> reported = new ArrayList<>();

    @AfterEach
    void close() {
        connections.close();
    }

    private ShuffleRegistrar registrar() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing answers there
        }
        MasterClient master = new MasterClient(connections, Collections.singletonList("127.0.0.1:" + port));
        return new ShuffleRegistrar(
                "app-1",
                master,
                200,
                false,
                new SlotReserver(connections, "app-1", "user"),
                new SlotLeases(
                        "app-1",
                        master,
                        200,
                        false,
                        true,
                        io.estuary.common.time.Clock.system(),
                        work::add,
                        (task, delay) -> work.add(task),
                        ""),
                new FailedWorkers(System::currentTimeMillis),
                reported::add,
                work::add,
                "");
    }

    @Test
    void tasksShareOneRegistrationAndAFailedOneIsTriedAgain() throws Exception {
        ShuffleRegistrar registrar = registrar();
        ShuffleState s = new ShuffleState(7, 3, 1, 0, 2, 4);
        CompletableFuture<EpochTable> first = registrar.register(s);
        assertSame(first, registrar.register(s), "a second task waits for the same registration");
        assertEquals(1, work.size(), "one registration started");

        work.poll().run();
        ExecutionException e = assertThrows(ExecutionException.class, first::get);
        assertInstanceOf(EstuaryException.class, e.getCause());
        assertTrue(
                e.getCause().getMessage().contains("cannot register"),
                e.getCause().getMessage());
        assertTrue(e.getCause().getMessage().contains("app-1"), e.getCause().getMessage());
        assertTrue(reported.isEmpty(), "no worker was blamed for the master's silence");

        CompletableFuture<EpochTable> again = registrar.register(s);
        assertNotSame(first, again, "the failed registration was forgotten");
        assertEquals(1, work.size(), "a new registration started");
        work.poll().run();
        assertThrows(ExecutionException.class, again::get);
    }

    @Test
    void aWriterTakesOverARegistrationQueuedAtDeclaration() throws Exception {
        ShuffleRegistrar registrar = registrar();
        Deque<Runnable> ahead = new ArrayDeque<>();
        ShuffleState s = ShuffleState.unclaimed(8, 4, 2, 4);
        registrar.registerAhead(s, ahead::add);
        CompletableFuture<EpochTable> declared = s.slots;
        assertEquals(1, ahead.size());
        assertTrue(work.isEmpty(), "declarations wait on their own executor");
        assertSame(declared, registrar.register(s), "a writer waits for the declared registration");
        assertEquals(1, work.size(), "and starts it on the work pool, not behind other declarations");
        assertSame(declared, registrar.register(s));
        assertEquals(1, work.size(), "taken over once");
        work.poll().run();
        assertThrows(ExecutionException.class, declared::get); // no master answers here
        ahead.poll().run(); // taken already: runs nothing
        assertNull(s.slots, "the failed registration was dropped; the next writer tries again");
    }

    @Test
    void aDeclaredShuffleForgottenBeforeItsTurnNeverRegisters() throws Exception {
        ShuffleRegistrar registrar = registrar();
        Deque<Runnable> ahead = new ArrayDeque<>();
        ShuffleState s = ShuffleState.unclaimed(9, 5, 2, 4);
        registrar.registerAhead(s, ahead::add);
        CompletableFuture<EpochTable> declared = s.slots;
        s.forgotten = true;
        ahead.poll().run();
        ExecutionException e = assertThrows(ExecutionException.class, declared::get);
        assertTrue(e.getCause().getMessage().contains("forgotten"), e.getCause().getMessage());
    }
}
