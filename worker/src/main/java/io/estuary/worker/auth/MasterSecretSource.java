package io.estuary.worker.auth;

import io.estuary.common.protocol.GetApplicationSecretRequest;
import io.estuary.common.protocol.GetApplicationSecretResponse;
import io.estuary.common.protocol.Request;
import io.estuary.common.util.EstuaryException;
import io.estuary.network.client.RemoteException;
import io.estuary.network.rpc.MasterClient;
import java.util.function.Function;

/**
 * Where an {@link ApplicationSecretCache} learns what it does not hold: asks the master for an application's secret
 * (sealed with the cluster secret), waiting up to a bound, and fails with an {@link EstuaryException} naming the
 * application when no master answers or the master refuses. Blocks the calling thread (the cache's own pool).
 * Thread-safe.
 */
public final class MasterSecretSource implements Function<String, GetApplicationSecretResponse> {
    private final MasterClient master;
    private final long waitMs;

    public MasterSecretSource(MasterClient master, long waitMs) {
        this.master = master;
        this.waitMs = waitMs;
    }

    @Override
    public GetApplicationSecretResponse apply(String appId) {
        try {
            return master.ask(
                    Request.newBuilder()
                            .setGetApplicationSecret(
                                    GetApplicationSecretRequest.newBuilder().setAppId(appId)),
                    GetApplicationSecretResponse.parser(),
                    waitMs);
        } catch (RemoteException e) {
            throw new EstuaryException(
                    "cannot learn the secret of application " + appId + " from the master: " + e.getMessage(), e);
        }
    }
}
