package io.estuary.common.security;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 over a sequence of parts, each preceded by its length so that no two different sequences hash the
 * same bytes ("ab" + "c" differs from "a" + "bc"). Every key Estuary derives and every proof it checks goes through
 * here. Stateless, thread-safe.
 */
public final class Hmac {
    public static final int LENGTH = 32;

    private Hmac() {}

    /** HMAC-SHA256 under {@code key} of the length-prefixed {@code parts}. */
    public static byte[] sha256(byte[] key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            for (byte[] part : parts) {
                mac.update(ByteBuffer.allocate(4).putInt(part.length).array());
                mac.update(part);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    /** The UTF-8 bytes of {@code s}, for a part. */
    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
