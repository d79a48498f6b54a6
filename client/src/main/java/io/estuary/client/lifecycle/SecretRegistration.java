package io.estuary.client.lifecycle;

import com.google.protobuf.ByteString;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.GetRegistrationKeyRequest;
import io.estuary.common.protocol.GetRegistrationKeyResponse;
import io.estuary.common.protocol.RegisterApplicationRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.security.RegistrationKeys;
import io.estuary.common.security.SecretBox;
import io.estuary.common.status.StatusCode;
import io.estuary.network.client.RemoteException;
import io.estuary.network.rpc.MasterClient;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.SecureRandom;

/**
 * Registers an application's secret with the master leader without sending it in clear: asks the leader for its
 * registration key ({@code GetRegistrationKey}), derives a key by ECDH with a key pair of its own made for this
 * registration, and sends the secret sealed under it ({@code RegisterApplication}). A leader change between the two
 * steps is answered NOT_LEADER (the master client follows it) and then BAD_REQUEST by the new leader (sealed for
 * another master's key): the registration starts again from the key, a few times. Stateless.
 */
final class SecretRegistration {
    /** Rounds of key + registration before a refusal is taken as the answer. */
    static final int ROUNDS = 3;

    private static final SecureRandom RANDOM = new SecureRandom();

    private SecretRegistration() {}

    /** A new random 32-byte application secret. */
    static byte[] newSecret() {
        byte[] s = new byte[32];
        RANDOM.nextBytes(s);
        return s;
    }

    /**
     * Registers {@code secret} as application {@code appId}'s, retrying over masters for up to {@code waitMs} per
     * call.
     *
     * @throws RemoteException the master's refusal (FORBIDDEN: the application has another secret or principal), or no
     *     master
     */
    static void register(MasterClient master, String appId, byte[] secret, ApplicationPrincipal principal, long waitMs)
            throws RemoteException {
        RemoteException last = null;
        for (int round = 0; round < ROUNDS; round++) {
            GetRegistrationKeyResponse key;
            try {
                key = master.ask(
                        Request.newBuilder().setGetRegistrationKey(GetRegistrationKeyRequest.getDefaultInstance()),
                        GetRegistrationKeyResponse.parser(),
                        waitMs);
            } catch (RemoteException e) {
                if (e.status() != StatusCode.BAD_REQUEST) throw e;
                throw new RemoteException(
                        e.status(),
                        "the master cannot register application secrets (a release before 0.2.0?): " + e.getMessage(),
                        e);
            }
            byte[] nonce = new byte[16];
            RANDOM.nextBytes(nonce);
            KeyPair mine = RegistrationKeys.generate();
            byte[] sealingKey;
            try {
                sealingKey = RegistrationKeys.sealingKey(
                        mine.getPrivate(), key.getMasterPublicKey().toByteArray(), appId, nonce);
            } catch (GeneralSecurityException e) {
                last = new RemoteException(
                        StatusCode.BAD_REQUEST, "the master's registration key is not an EC P-256 key: " + e, e);
                continue;
            }
            try {
                master.ask(
                        Request.newBuilder()
                                .setRegisterApplication(RegisterApplicationRequest.newBuilder()
                                        .setAppId(appId)
                                        .setClientPublicKey(ByteString.copyFrom(
                                                mine.getPublic().getEncoded()))
                                        .setNonce(ByteString.copyFrom(nonce))
                                        .setMasterPublicKey(key.getMasterPublicKey())
                                        .setSealedSecret(ByteString.copyFrom(SecretBox.seal(sealingKey, secret, appId)))
                                        .setUser(principal.getUser())
                                        .setPrincipal(principal)),
                        Empty.parser(),
                        waitMs);
                return;
            } catch (RemoteException e) {
                if (e.status() != StatusCode.BAD_REQUEST) throw e;
                last = e; // most likely sealed for a master that no longer leads: get the key again
            }
        }
        throw new RemoteException(
                last.status(), "registering application " + appId + " failed: " + last.getMessage(), last);
    }
}
