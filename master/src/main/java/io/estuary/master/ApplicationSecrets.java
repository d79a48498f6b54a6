package io.estuary.master;

import com.google.protobuf.ByteString;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.GetApplicationSecretResponse;
import io.estuary.common.protocol.GetRegistrationKeyResponse;
import io.estuary.common.protocol.RegisterApplicationRequest;
import io.estuary.common.security.ClusterKeys;
import io.estuary.common.security.RegistrationKeys;
import io.estuary.common.security.SecretBox;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.master.state.StateLog;
import io.estuary.network.auth.Identity;
import io.estuary.network.auth.SecretLookup;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.MessageDigest;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The master's side of application secrets: the leader's registration key pair (EC P-256, made when this master
 * starts, so a registration sealed for another master's key is refused and the client asks for the key again), the
 * unsealing of a registration, the sealing of secrets under the cluster-derived key for the log and for workers, and
 * the {@link SecretLookup} of the master's RPC port (the cluster secret; an application's secret unsealed from the
 * agreed state). With authentication off ({@code clusterSecret} null) nothing is sealed and no secret is known.
 * Thread-safe: immutable but for the state it reads through the log.
 */
final class ApplicationSecrets implements SecretLookup {
    /** Bounds of an application secret: {@code Credentials} needs 16 bytes; lifecycle managers make 32. */
    static final int MIN_SECRET = 16;

    static final int MAX_SECRET = 1024;

    static final int NONCE = 16;

    private final StateLog log;
    private final boolean registrationRequired;
    private final byte[] clusterSecret;
    private final byte[] sealingKey;
    private final KeyPair registrationKeys = RegistrationKeys.generate();
    private final ByteString publicKey =
            ByteString.copyFrom(registrationKeys.getPublic().getEncoded());

    /**
     * {@code clusterSecret}: null when authentication is off. {@code registrationRequired}: enforce mode, where an
     * application registers its secret before anything else; in permissive mode (a rolling upgrade) clients of the
     * previous release still register implicitly, as before.
     */
    ApplicationSecrets(StateLog log, byte[] clusterSecret, boolean registrationRequired) {
        this.registrationRequired = clusterSecret != null && registrationRequired;
        this.log = log;
        this.clusterSecret = clusterSecret == null ? null : clusterSecret.clone();
        this.sealingKey = clusterSecret == null ? null : ClusterKeys.sealingKey(clusterSecret);
    }

    /** Whether an application must register its secret before anything else (authentication enforced). */
    boolean registrationRequired() {
        return registrationRequired;
    }

    /** Whether this master authenticates (keeps application secrets). */
    boolean enabled() {
        return sealingKey != null;
    }

    GetRegistrationKeyResponse registrationKey() {
        return GetRegistrationKeyResponse.newBuilder()
                .setMasterPublicKey(publicKey)
                .build();
    }

    /**
     * The secret a registration carries, unsealed; refuses (typed) a registration from a connection proven as another
     * application (FORBIDDEN), sealed for another master's key, or whose key, nonce or seal is bad (BAD_REQUEST, naming
     * which: the client starts again at GetRegistrationKey).
     */
    byte[] unseal(RegisterApplicationRequest r, Identity who) {
        String app = r.getAppId();
        if (who.isApplication() && !who.mayActFor(app)) {
            throw new StatusException(
                    StatusCode.FORBIDDEN,
                    "a connection authenticated as application " + who.appId() + " may not register application "
                            + app);
        }
        if (!r.getMasterPublicKey().equals(publicKey)) {
            throw new StatusException(
                    StatusCode.BAD_REQUEST,
                    "the registration of " + app + " was sealed for another master's key (a new leader, or this "
                            + "master restarted); get the registration key again");
        }
        if (r.getNonce().size() != NONCE) {
            throw new StatusException(
                    StatusCode.BAD_REQUEST,
                    "the registration of " + app + " has a nonce of "
                            + r.getNonce().size() + " bytes, not " + NONCE);
        }
        byte[] key;
        try {
            key = RegistrationKeys.sealingKey(
                    registrationKeys.getPrivate(),
                    r.getClientPublicKey().toByteArray(),
                    app,
                    r.getNonce().toByteArray());
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new StatusException(
                    StatusCode.BAD_REQUEST,
                    "the registration of " + app + " has no valid EC P-256 client_public_key (" + e.getMessage() + ")");
        }
        byte[] secret;
        try {
            secret = SecretBox.open(key, r.getSealedSecret().toByteArray(), app);
        } catch (GeneralSecurityException e) {
            throw new StatusException(
                    StatusCode.BAD_REQUEST,
                    "the sealed_secret of the registration of " + app + " does not open with the agreed key: altered, "
                            + "or sealed for another application, key or nonce");
        }
        if (secret.length < MIN_SECRET || secret.length > MAX_SECRET) {
            throw new StatusException(
                    StatusCode.BAD_REQUEST,
                    "the secret registered for " + app + " has " + secret.length + " bytes; it needs " + MIN_SECRET
                            + " to " + MAX_SECRET);
        }
        return secret;
    }

    /** {@code secret} sealed for the log; only with authentication on. */
    ByteString sealForLog(String appId, byte[] secret) {
        return ByteString.copyFrom(SecretBox.seal(sealingKey, secret, appId));
    }

    /** Whether {@code secret} is the application's registered one (constant time). */
    boolean matches(String appId, byte[] secret) {
        byte[] known = secretOf(appId);
        return known != null && MessageDigest.isEqual(known, secret);
    }

    /** Whether the application registered a secret (as the agreed state says). */
    boolean hasSecret(String appId) {
        return log.stateMachine().read(s -> s.sealedSecret(appId)) != null;
    }

    /** The application's secret unsealed from the agreed state; null when it has none (or auth is off). */
    byte[] secretOf(String appId) {
        if (sealingKey == null) return null;
        ByteString sealed = log.stateMachine().read(s -> s.sealedSecret(appId));
        if (sealed == null) return null;
        try {
            return SecretBox.open(sealingKey, sealed.toByteArray(), appId);
        } catch (GeneralSecurityException e) {
            // Another cluster secret sealed it: every master must share one file.
            throw new StatusException(
                    StatusCode.FATAL,
                    "the secret of application " + appId + " in the masters' state does not open with this master's "
                            + "cluster secret: do all masters read the same estuary.auth.cluster.secretFile?");
        }
    }

    /**
     * A worker's question: the application's secret sealed under the cluster-derived key (empty when it has none).
     * Servers only: FORBIDDEN for an application, UNAUTHENTICATED for an anonymous connection.
     */
    GetApplicationSecretResponse secretForWorker(String appId, Identity who) {
        if (sealingKey == null) return GetApplicationSecretResponse.getDefaultInstance();
        if (who.isAnonymous()) {
            throw new StatusException(
                    StatusCode.UNAUTHENTICATED,
                    "only servers ask for application secrets; this connection is anonymous");
        }
        if (!who.isCluster()) { // not even unchecked peers of the permissive mode
            throw new StatusException(
                    StatusCode.FORBIDDEN, who.name() + " may not ask for application secrets: servers only");
        }
        GetApplicationSecretResponse.Builder b = GetApplicationSecretResponse.newBuilder();
        // Sealed afresh (a new IV) rather than the log's bytes: the same key, but nothing ties an answer to the log.
        byte[] secret = secretOf(appId);
        if (secret != null) b.setSealedSecret(ByteString.copyFrom(SecretBox.seal(sealingKey, secret, appId)));
        return b.build();
    }

    /**
     * What a slot answer carries for the driver to pass on to the workers it reserves on: the application's secret
     * sealed (afresh) under the cluster-derived key, only for a connection proven as that application (the driver
     * cannot open it; a worker can). Empty with authentication off, for other identities, or without a secret.
     */
    ByteString sealedForReservations(String appId, Identity who) {
        if (sealingKey == null || !who.isApplication() || !who.mayActFor(appId)) return ByteString.EMPTY;
        byte[] secret = secretOf(appId);
        return secret == null ? ByteString.EMPTY : ByteString.copyFrom(SecretBox.seal(sealingKey, secret, appId));
    }

    /**
     * The application's principal sealed (SecretBox, aad {@code "principal/" + appId}) under the cluster-derived key,
     * for the workers a driver reserves on, on the same terms as {@link #sealedForReservations}: only for a connection
     * proven as that application, empty with authentication off. The driver cannot open or alter it.
     */
    ByteString sealPrincipal(String appId, ApplicationPrincipal principal, Identity who) {
        if (sealingKey == null || !who.isApplication() || !who.mayActFor(appId)) return ByteString.EMPTY;
        return ByteString.copyFrom(SecretBox.seal(sealingKey, principal.toByteArray(), "principal/" + appId));
    }

    @Override
    public CompletableFuture<byte[]> secretOf(Identity identity) {
        byte[] secret = null;
        try {
            if (clusterSecret != null) {
                if (identity.isCluster()) secret = clusterSecret.clone();
                else if (identity.isApplication()) secret = secretOf(identity.appId());
            }
        } catch (RuntimeException e) {
            CompletableFuture<byte[]> failed = new CompletableFuture<>();
            failed.completeExceptionally(e);
            return failed;
        }
        if (secret == null && clusterSecret != null && identity.isApplication() && !log.isLeader()) {
            // A follower applies the leader's entries a moment after they commit: an application that registered
            // with the leader and connects here at once is waited for, briefly, before it is refused as unknown.
            return appliedSecret(identity.appId(), System.nanoTime() + FOLLOWER_WAIT_NANOS);
        }
        return CompletableFuture.completedFuture(secret);
    }

    /** How long a follower waits for an application unknown to it to appear in its applied state. */
    static final long FOLLOWER_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);

    private CompletableFuture<byte[]> appliedSecret(String appId, long deadline) {
        return CompletableFuture.supplyAsync(
                        () -> secretOf(appId), CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS))
                .thenCompose(found -> found != null || System.nanoTime() - deadline > 0
                        ? CompletableFuture.completedFuture(found)
                        : appliedSecret(appId, deadline));
    }
}
