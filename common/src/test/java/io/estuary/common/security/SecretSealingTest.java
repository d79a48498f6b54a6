package io.estuary.common.security;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class SecretSealingTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes();

    @Test
    void bothSidesOfARegistrationDeriveTheSameKeyAndOnlyThey() throws Exception {
        KeyPair master = RegistrationKeys.generate();
        KeyPair client = RegistrationKeys.generate();
        byte[] nonce = new byte[16];
        byte[] clientKey = RegistrationKeys.sealingKey(
                client.getPrivate(), master.getPublic().getEncoded(), "app-1", nonce);
        byte[] masterKey = RegistrationKeys.sealingKey(
                master.getPrivate(), client.getPublic().getEncoded(), "app-1", nonce);
        assertArrayEquals(clientKey, masterKey);

        byte[] sealed = SecretBox.seal(clientKey, SECRET, "app-1");
        assertFalse(contains(sealed, SECRET), "the sealed form holds the secret in clear");
        assertArrayEquals(SECRET, SecretBox.open(masterKey, sealed, "app-1"));

        // Another master's key, another application, or another nonce opens nothing.
        KeyPair other = RegistrationKeys.generate();
        byte[] otherKey = RegistrationKeys.sealingKey(
                other.getPrivate(), client.getPublic().getEncoded(), "app-1", nonce);
        assertThrows(GeneralSecurityException.class, () -> SecretBox.open(otherKey, sealed, "app-1"));
        assertThrows(GeneralSecurityException.class, () -> SecretBox.open(masterKey, sealed, "app-2"));
        byte[] nonce2 = new byte[16];
        nonce2[0] = 1;
        byte[] keyOtherNonce = RegistrationKeys.sealingKey(
                master.getPrivate(), client.getPublic().getEncoded(), "app-1", nonce2);
        assertThrows(GeneralSecurityException.class, () -> SecretBox.open(keyOtherNonce, sealed, "app-1"));
    }

    @Test
    void anAlteredOrTruncatedSealIsRefused() {
        byte[] key = ClusterKeys.sealingKey(SECRET);
        byte[] sealed = SecretBox.seal(key, SECRET, "app-1");
        byte[] flipped = sealed.clone();
        flipped[flipped.length - 1] ^= 1;
        assertThrows(GeneralSecurityException.class, () -> SecretBox.open(key, flipped, "app-1"));
        assertThrows(GeneralSecurityException.class, () -> SecretBox.open(key, Arrays.copyOf(sealed, 20), "app-1"));
        assertThrows(GeneralSecurityException.class, () -> RegistrationKeys.publicKey(new byte[] {1, 2, 3}));
    }

    @Test
    void lengthPrefixesKeepPartsApart() {
        byte[] k = new byte[32];
        assertFalse(Arrays.equals(
                Hmac.sha256(k, Hmac.utf8("ab"), Hmac.utf8("c")), Hmac.sha256(k, Hmac.utf8("a"), Hmac.utf8("bc"))));
    }

    private static boolean contains(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) if (hay[i + j] != needle[j]) continue outer;
            return true;
        }
        return false;
    }
}
