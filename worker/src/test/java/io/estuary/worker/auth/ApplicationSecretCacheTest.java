package io.estuary.worker.auth;

import static org.junit.jupiter.api.Assertions.*;

import com.google.protobuf.ByteString;
import io.estuary.common.protocol.GetApplicationSecretResponse;
import io.estuary.common.security.ClusterKeys;
import io.estuary.common.security.SecretBox;
import io.estuary.network.auth.Identity;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The worker's cache of application secrets, with a master played by a function that answers as the master does
 * (sealed under the cluster-derived key) and counts the questions.
 */
class ApplicationSecretCacheTest {
    private static final byte[] CLUSTER =
            "a cluster secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);
    private final ExecutorService askOn = Executors.newFixedThreadPool(2);
    private final Map<String, byte[]> known = new ConcurrentHashMap<>();
    private final AtomicInteger asked = new AtomicInteger();
    private volatile CountDownLatch hold = new CountDownLatch(0);

    @AfterEach
    void tearDown() {
        askOn.shutdownNow();
    }

    private GetApplicationSecretResponse master(String app) {
        asked.incrementAndGet();
        try {
            if (!hold.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("never released");
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        byte[] s = known.get(app);
        if (s == null) return GetApplicationSecretResponse.getDefaultInstance();
        return GetApplicationSecretResponse.newBuilder()
                .setSealedSecret(ByteString.copyFrom(SecretBox.seal(ClusterKeys.sealingKey(CLUSTER), s, app)))
                .build();
    }

    private ApplicationSecretCache cache(int capacity) {
        return new ApplicationSecretCache(CLUSTER, capacity, this::master, askOn);
    }

    private static byte[] secret(String app) {
        return ("the secret of " + app + " padded to length").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] get(CompletableFuture<byte[]> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    @Test
    void concurrentMissesForOneApplicationAskTheMasterOnceThenHit() throws Exception {
        known.put("a", secret("a"));
        ApplicationSecretCache c = cache(10);
        hold = new CountDownLatch(1);
        List<CompletableFuture<byte[]>> waiting = new ArrayList<>();
        for (int i = 0; i < 20; i++) waiting.add(c.secretOf(Identity.application("a")));
        hold.countDown();
        for (CompletableFuture<byte[]> f : waiting) assertArrayEquals(secret("a"), get(f));
        assertEquals(1, asked.get());
        assertArrayEquals(secret("a"), get(c.secretOf(Identity.application("a"))));
        assertEquals(1, asked.get(), "a hit asks nothing");
        assertTrue(c.contains("a"));
    }

    @Test
    void theCacheIsBoundedLeastRecentlyUsedOutFirst() throws Exception {
        ApplicationSecretCache c = cache(3);
        for (String app : new String[] {"a", "b", "c"}) {
            known.put(app, secret(app));
            get(c.applicationSecret(app));
        }
        get(c.applicationSecret("a")); // a used again: b is now the least recently used
        known.put("d", secret("d"));
        get(c.applicationSecret("d"));
        assertEquals(3, c.size());
        assertFalse(c.contains("b"));
        assertTrue(c.contains("a") && c.contains("c") && c.contains("d"));
        int before = asked.get();
        assertArrayEquals(secret("b"), get(c.applicationSecret("b")));
        assertEquals(before + 1, asked.get(), "an evicted secret is asked again");
    }

    @Test
    void forgottenAndUnknownApplicationsAreAskedAgain() throws Exception {
        ApplicationSecretCache c = cache(10);
        assertNull(get(c.applicationSecret("unknown")));
        assertFalse(c.contains("unknown"));
        known.put("ended", secret("ended"));
        get(c.applicationSecret("ended"));
        c.forget("ended");
        known.remove("ended");
        assertFalse(c.contains("ended"));
        assertNull(get(c.applicationSecret("ended")), "once the master says it ended, its secret is gone");
        assertEquals(3, asked.get());
    }

    @Test
    void anApplicationForgottenWhileTheMasterAnswersIsNotCached() throws Exception {
        known.put("racing", secret("racing"));
        ApplicationSecretCache c = cache(10);
        hold = new CountDownLatch(1);
        CompletableFuture<byte[]> f = c.applicationSecret("racing");
        io.estuary.testing.Waits.waitFor(() -> asked.get() == 1, 30_000, "the master is asked");
        c.forget("racing");
        hold.countDown();
        get(f);
        assertFalse(c.contains("racing"));
    }

    @Test
    void serversGetTheClusterSecretAndAnonymousPeersNothing() throws Exception {
        ApplicationSecretCache c = cache(10);
        assertArrayEquals(CLUSTER, get(c.secretOf(Identity.CLUSTER)));
        assertNull(get(c.secretOf(Identity.ANONYMOUS)));
        assertEquals(0, asked.get());
    }

    @Test
    void aMasterThatCannotAnswerFailsTheLookupAndTheNextOneAsksAgain() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        ApplicationSecretCache c = new ApplicationSecretCache(
                CLUSTER,
                10,
                app -> {
                    if (calls.incrementAndGet() == 1) throw new IllegalStateException("no master reachable");
                    return master(app);
                },
                askOn);
        known.put("a", secret("a"));
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(c.applicationSecret("a")));
        assertTrue(e.getCause().getMessage().contains("no master"));
        assertArrayEquals(secret("a"), get(c.applicationSecret("a")));
    }

    @Test
    void anAnswerSealedUnderAnotherClusterSecretIsRefused() {
        byte[] other = "another cluster secret, thirty-two bytes or more".getBytes(StandardCharsets.UTF_8);
        ApplicationSecretCache c = new ApplicationSecretCache(other, 10, this::master, askOn);
        known.put("a", secret("a"));
        ExecutionException e = assertThrows(ExecutionException.class, () -> get(c.applicationSecret("a")));
        assertTrue(
                e.getCause().getMessage().contains("estuary.auth.cluster.secretFile"),
                e.getCause().getMessage());
        assertFalse(c.contains("a"));
    }
}
