package io.estuary.common.security;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals a secret for transport or storage with AES-256-GCM: a fresh random 12-byte IV, then the ciphertext with its
 * 16-byte tag. The associated data (the application id) binds a sealed secret to the application it belongs to, so
 * it cannot be replayed as another application's. Stateless, thread-safe.
 */
public final class SecretBox {
    private static final int IV = 12;
    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    private SecretBox() {}

    /** {@code secret} sealed under the 32-byte {@code key}, bound to {@code aad}. */
    public static byte[] seal(byte[] key, byte[] secret, String aad) {
        byte[] iv = new byte[IV];
        RANDOM.nextBytes(iv);
        try {
            Cipher c = cipher(Cipher.ENCRYPT_MODE, key, iv, aad);
            byte[] sealed = c.doFinal(secret);
            byte[] out = Arrays.copyOf(iv, IV + sealed.length);
            System.arraycopy(sealed, 0, out, IV, sealed.length);
            return out;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is part of every Java runtime", e);
        }
    }

    /**
     * The secret in {@code sealed}.
     *
     * @throws GeneralSecurityException when it was not sealed under {@code key} for {@code aad}, or was altered
     */
    public static byte[] open(byte[] key, byte[] sealed, String aad) throws GeneralSecurityException {
        if (sealed.length < IV + TAG_BITS / 8) throw new GeneralSecurityException("a sealed secret is too short");
        Cipher c = cipher(Cipher.DECRYPT_MODE, key, Arrays.copyOf(sealed, IV), aad);
        return c.doFinal(sealed, IV, sealed.length - IV);
    }

    private static Cipher cipher(int mode, byte[] key, byte[] iv, String aad) throws GeneralSecurityException {
        if (key.length != 32) throw new IllegalArgumentException("an AES-256 key has 32 bytes, not " + key.length);
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
        c.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(TAG_BITS, iv));
        c.updateAAD(Hmac.utf8(aad));
        return c;
    }
}
