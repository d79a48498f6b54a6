package io.estuary.server.admin;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.EnumSet;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The bearer token of the admin HTTP API: read from {@code estuary.auth.admin.tokenFile} (one line, trimmed), else
 * derived from the cluster secret file as the lowercase hex of HMAC-SHA256 keyed with the file's bytes, over
 * {@value #DERIVATION_LABEL}. Servers and {@code bin/estuary} load it the same way, so an operator who can read the
 * servers' configuration and secret files needs nothing else. Both files must be readable by their owner only (a
 * group- or world-readable or -writable file is refused, as the cluster secret's). Messages name the file and the
 * problem, never its content; {@link #toString()} never shows the token.
 *
 * <p>Immutable and thread-safe.
 */
public final class AdminToken {
    /** What the derived token is an HMAC of: changing it changes every derived token. */
    public static final String DERIVATION_LABEL = "estuary admin token v1";

    /** A token shorter than this is refused: it would be guessable. */
    public static final int MIN_LENGTH = 16;

    private static final Set<PosixFilePermission> NOT_OWNER = EnumSet.of(
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE);

    private final String value;
    private final String source;

    private AdminToken(String value, String source) {
        this.value = value;
        this.source = source;
    }

    /**
     * The token {@code conf} gives: its token file, else derived from its cluster secret file; null when it names
     * neither. Throws {@link ConfigException} when a named file is missing, unreadable, open to others or holds no
     * valid token.
     */
    public static AdminToken fromConf(EstuaryConf conf) {
        String tokenFile = conf.get(AuthConfig.ADMIN_TOKEN_FILE).trim();
        if (!tokenFile.isEmpty()) return fromFile(Paths.get(tokenFile), AuthConfig.ADMIN_TOKEN_FILE.key());
        String secretFile = conf.get(AuthConfig.CLUSTER_SECRET_FILE).trim();
        if (!secretFile.isEmpty()) return derivedFrom(Paths.get(secretFile), AuthConfig.CLUSTER_SECRET_FILE.key());
        return null;
    }

    /** The token in {@code file} (one line; surrounding whitespace dropped); {@code what} names it in errors. */
    public static AdminToken fromFile(Path file, String what) {
        String text = new String(read(file, what), StandardCharsets.UTF_8).trim();
        if (text.length() < MIN_LENGTH) {
            throw new ConfigException(what + ": the admin token in " + file + " is too short (" + text.length()
                    + " characters; at least " + MIN_LENGTH + ")");
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c <= ' ' || c > '~') {
                throw new ConfigException(what + ": the admin token in " + file + " holds a character that is not "
                        + "printable ASCII or is a space, at position " + i + " (an HTTP header cannot carry it)");
            }
        }
        return new AdminToken(text, file.toString());
    }

    /** The token derived from the cluster secret in {@code secretFile}. */
    public static AdminToken derivedFrom(Path secretFile, String what) {
        byte[] secret = read(secretFile, what);
        if (secret.length == 0) throw new ConfigException(what + ": " + secretFile + " is empty");
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] h = mac.doFinal(DERIVATION_LABEL.getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder(h.length * 2);
            for (byte b : h) hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
            return new AdminToken(hex.toString(), "derived from the cluster secret " + secretFile);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JVM", e); // every JVM has it
        } finally {
            java.util.Arrays.fill(secret, (byte) 0);
        }
    }

    /**
     * Refuses a file that others than its owner may read or write. TODO(merge): share ClusterSecret's check.
     * On a file system without POSIX permissions there is nothing to check.
     */
    static void checkOwnerOnly(Path file, String what) {
        Set<PosixFilePermission> perms;
        try {
            perms = Files.getPosixFilePermissions(file);
        } catch (UnsupportedOperationException e) {
            return;
        } catch (IOException e) {
            throw new ConfigException(what + ": cannot read the permissions of " + file + ": " + e.getMessage());
        }
        Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission p : perms) if (NOT_OWNER.contains(p)) open.add(p);
        if (!open.isEmpty()) {
            throw new ConfigException(what + ": " + file + " must be readable by its owner only, but has " + open
                    + " (chmod 600 " + file + ")");
        }
    }

    private static byte[] read(Path file, String what) {
        if (!Files.isRegularFile(file)) throw new ConfigException(what + ": no such file " + file);
        checkOwnerOnly(file, what);
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new ConfigException(
                    what + ": cannot read " + file + " (" + e.getClass().getSimpleName() + ")");
        }
    }

    /**
     * Whether {@code presented} is this token, in time that does not depend on where they differ (both are hashed
     * first, so neither the content nor the length of the token leaks through timing).
     */
    public boolean matches(String presented) {
        if (presented == null) return false;
        return MessageDigest.isEqual(sha256(value), sha256(presented));
    }

    /** The token itself, for an {@code Authorization} header; never log it. */
    public String value() {
        return value;
    }

    /** Where it came from (a file name, or "derived from ..."), for messages. */
    public String source() {
        return source;
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "AdminToken(" + source + ")";
    }
}
