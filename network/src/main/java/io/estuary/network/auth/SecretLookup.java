package io.estuary.network.auth;

import java.util.concurrent.CompletableFuture;

/**
 * Where a server finds the secret of an identity a connecting peer claims: the cluster secret for
 * {@link Identity#CLUSTER}, an application's secret for that application. A master reads its replicated state; a
 * worker its bounded cache, asking the master on a miss; a driver knows only its own application. Completes with null
 * when the identity is unknown (an application never registered, or expired). Called on network threads: must not
 * block (a lookup that needs the network completes later). Implementations are thread-safe.
 */
@FunctionalInterface
public interface SecretLookup {
    CompletableFuture<byte[]> secretOf(Identity identity);
}
