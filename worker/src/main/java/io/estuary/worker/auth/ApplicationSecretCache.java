package io.estuary.worker.auth;

import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.GetApplicationSecretResponse;
import io.estuary.common.security.ClusterKeys;
import io.estuary.common.security.SecretBox;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.network.auth.Identity;
import io.estuary.network.auth.SecretLookup;
import java.security.GeneralSecurityException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The {@link SecretLookup} of a worker's ports: the cluster secret for servers, and each application's secret from a
 * bounded cache (least recently used out first), filled on a miss by asking the master ({@code GetApplicationSecret}
 * on the worker's cluster-authenticated connection; the answer is sealed under the cluster-derived key). Concurrent
 * misses for one application share one question. A slot reservation may bring the secret too, sealed by the master
 * under the same key and passed on by the driver ({@link #learnSealed}): pushes to reserved slots then authenticate
 * without a question, even while no master leads. The master's heartbeat answers name applications that ended or
 * expired: {@link #forget} drops them. An application the master does not know is not cached (asked again next time).
 *
 * <p>Thread-safe: the cache is guarded by its own lock; questions run on {@code askOn} (they block), never on the
 * network thread that calls {@link #secretOf}.
 */
public final class ApplicationSecretCache implements SecretLookup {
    private final byte[] clusterSecret;
    private final byte[] sealingKey;
    private final Function<String, GetApplicationSecretResponse> askMaster;
    private final Executor askOn;
    /** Guarded by itself. Access order: the least recently used entry goes first once the bound is passed. */
    private final Map<String, byte[]> secrets;
    /** Questions to the master under way, by application. */
    private final Map<String, CompletableFuture<byte[]>> asking = new ConcurrentHashMap<>();
    /** Questions sent to the master since the start (misses that were not shared). */
    private final AtomicLong questions = new AtomicLong();

    /**
     * @param askMaster asks the master for an application's secret (blocking); throws when no master answers
     * @param askOn runs those questions
     */
    public ApplicationSecretCache(
            byte[] clusterSecret,
            int capacity,
            Function<String, GetApplicationSecretResponse> askMaster,
            Executor askOn) {
        if (capacity < 1) throw new IllegalArgumentException("capacity must be positive: " + capacity);
        this.clusterSecret = clusterSecret.clone();
        this.sealingKey = ClusterKeys.sealingKey(clusterSecret);
        this.askMaster = askMaster;
        this.askOn = askOn;
        this.secrets = new LinkedHashMap<String, byte[]>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, byte[]> eldest) {
                return size() > capacity;
            }
        };
    }

    @Override
    public CompletableFuture<byte[]> secretOf(Identity identity) {
        if (identity.isCluster()) return CompletableFuture.completedFuture(clusterSecret.clone());
        if (!identity.isApplication()) return CompletableFuture.completedFuture(null);
        return applicationSecret(identity.appId());
    }

    /** The application's secret: cached, or asked of the master (null when it does not know the application). */
    public CompletableFuture<byte[]> applicationSecret(String appId) {
        synchronized (secrets) {
            byte[] s = secrets.get(appId);
            if (s != null) return CompletableFuture.completedFuture(s.clone());
        }
        CompletableFuture<byte[]> mine = new CompletableFuture<>();
        CompletableFuture<byte[]> theirs = asking.putIfAbsent(appId, mine);
        if (theirs != null) return theirs.thenApply(s -> s == null ? null : s.clone());
        try {
            askOn.execute(() -> ask(appId, mine));
        } catch (RuntimeException e) { // stopping
            asking.remove(appId, mine);
            mine.completeExceptionally(e);
        }
        return mine.thenApply(s -> s == null ? null : s.clone());
    }

    private void ask(String appId, CompletableFuture<byte[]> mine) {
        byte[] secret;
        try {
            questions.incrementAndGet();
            secret = unseal(appId, askMaster.apply(appId));
        } catch (RuntimeException e) {
            asking.remove(appId, mine);
            mine.completeExceptionally(e);
            return;
        }
        synchronized (secrets) {
            // Not kept when forgotten meanwhile (the application ended while the master answered).
            if (secret != null && asking.get(appId) == mine) secrets.put(appId, secret);
            asking.remove(appId, mine);
        }
        mine.complete(secret);
    }

    private byte[] unseal(String appId, GetApplicationSecretResponse r) {
        if (r.getSealedSecret().isEmpty()) return null;
        try {
            return SecretBox.open(sealingKey, r.getSealedSecret().toByteArray(), appId);
        } catch (GeneralSecurityException e) {
            throw new StatusException(
                    StatusCode.FATAL,
                    "the master's answer for the secret of " + appId + " does not open with this worker's cluster "
                            + "secret: do the masters and workers read the same estuary.auth.cluster.secretFile?");
        }
    }

    /**
     * Caches the secret a reservation for {@code appId} carried, sealed by the master under the cluster-derived key
     * (bound to {@code appId}, so a seal of another application's secret does not open here). Refuses BAD_REQUEST a
     * seal that does not open: altered, for another application, or from masters with another cluster secret. An
     * application forgotten meanwhile comes back with its next reservation; its next heartbeat answer drops it again
     * when it has ended.
     */
    public void learnSealed(String appId, byte[] sealed) {
        byte[] secret;
        try {
            secret = SecretBox.open(sealingKey, sealed, appId);
        } catch (GeneralSecurityException e) {
            throw new StatusException(
                    StatusCode.BAD_REQUEST,
                    "the sealed secret in the reservation of " + appId + " does not open with this worker's cluster "
                            + "secret: altered, sealed for another application, or the masters read another "
                            + "estuary.auth.cluster.secretFile");
        }
        synchronized (secrets) {
            secrets.put(appId, secret);
        }
    }

    /** How many questions this cache sent to the master (for tests and metrics). */
    public long masterQuestions() {
        return questions.get();
    }

    /**
     * Opens the principal (user, tenant) the master sealed for an application's reservations (aad {@code "principal/"
     * + appId}): who runs it by the master's word, not the driver's. BAD_REQUEST when the seal does not open for that
     * application or holds no principal.
     */
    public ApplicationPrincipal openPrincipal(String appId, byte[] sealed) {
        try {
            return ApplicationPrincipal.parseFrom(SecretBox.open(sealingKey, sealed, "principal/" + appId));
        } catch (GeneralSecurityException | com.google.protobuf.InvalidProtocolBufferException e) {
            throw new StatusException(
                    StatusCode.BAD_REQUEST,
                    "the sealed principal in the reservation of " + appId + " does not open with this worker's "
                            + "cluster secret: altered, sealed for another application, or the masters read another "
                            + "estuary.auth.cluster.secretFile");
        }
    }

    /** Drops an application's secret (it ended or expired); a question under way is not cached. */
    public void forget(String appId) {
        synchronized (secrets) {
            secrets.remove(appId);
            asking.remove(appId);
        }
    }

    /** Applications cached now (for tests and metrics). */
    public int size() {
        synchronized (secrets) {
            return secrets.size();
        }
    }

    /** Whether the application's secret is cached (for tests). */
    public boolean contains(String appId) {
        synchronized (secrets) {
            return secrets.containsKey(appId);
        }
    }
}
