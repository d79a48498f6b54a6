package io.estuary.server.auth;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.util.EstuaryException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumSet;
import java.util.Set;

/**
 * The secret that masters and workers share ({@code estuary.auth.cluster.secretFile}): they prove it to each other
 * in every connection's handshake, and the master seals applications' secrets under a key derived from it.
 *
 * <p>The file holds the secret in base64 (one line; surrounding whitespace is ignored), at least {@link #MIN_BYTES}
 * bytes once decoded: {@code bin/estuary secret generate > FILE} writes one ({@link #generate}). On a POSIX file
 * system the file must be accessible by its owner only ({@code chmod 600 FILE}); a file that its group or others may
 * read or write is refused. Every refusal says what to do. The secret is never logged nor printed by
 * {@link #toString()}. Immutable (the bytes are copied out).
 */
public final class ClusterSecret {
    /** The least number of secret bytes accepted (and what {@link #generate} makes). */
    public static final int MIN_BYTES = 32;

    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_EXECUTE);

    private final byte[] secret;
    private final Path file;

    private ClusterSecret(byte[] secret, Path file) {
        this.secret = secret;
        this.file = file;
    }

    /**
     * The cluster secret a server needs: null when authentication is off ({@code estuary.auth.enabled=false}), else
     * read from {@code estuary.auth.cluster.secretFile}; throws an {@link EstuaryException} saying why and what to do
     * when the key is unset or the file is missing, unreadable, too short or not private.
     */
    public static ClusterSecret load(EstuaryConf conf) {
        if (!conf.get(AuthConfig.ENABLED)) return null;
        String name = conf.get(AuthConfig.CLUSTER_SECRET_FILE).trim();
        if (name.isEmpty()) {
            throw new EstuaryException(AuthConfig.ENABLED.key() + " is true but " + AuthConfig.CLUSTER_SECRET_FILE.key()
                    + " is not set: make a secret with `bin/estuary secret generate > FILE`, `chmod 600 FILE`, "
                    + "give every master and worker a copy, and set " + AuthConfig.CLUSTER_SECRET_FILE.key()
                    + "=FILE (or set " + AuthConfig.ENABLED.key() + "=false to run without authentication)");
        }
        return read(Paths.get(name));
    }

    /** The secret's bytes as {@link #load} finds them; null when authentication is off. */
    public static byte[] bytesOf(EstuaryConf conf) {
        ClusterSecret s = load(conf);
        return s == null ? null : s.bytes();
    }

    /** Reads and checks {@code file} (see the class doc). */
    public static ClusterSecret read(Path file) {
        String what = AuthConfig.CLUSTER_SECRET_FILE.key() + " " + file;
        checkPrivate(file, what);
        byte[] text;
        try {
            text = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new EstuaryException(what + " does not exist: make one with `bin/estuary secret generate > " + file
                    + "` and `chmod 600 " + file + "`");
        } catch (IOException e) {
            throw new EstuaryException(what + " cannot be read by this server: " + e, e);
        }
        byte[] secret;
        try {
            secret = Base64.getDecoder().decode(new String(text, StandardCharsets.US_ASCII).trim());
        } catch (IllegalArgumentException e) {
            throw new EstuaryException(what + " does not hold a base64 secret (its content is not shown): make one "
                    + "with `bin/estuary secret generate > " + file + "`");
        } finally {
            Arrays.fill(text, (byte) 0);
        }
        if (secret.length < MIN_BYTES) {
            int n = secret.length;
            Arrays.fill(secret, (byte) 0);
            throw new EstuaryException(what + " holds " + n + " bytes, fewer than the " + MIN_BYTES
                    + " required: make a new one with `bin/estuary secret generate > " + file + "`");
        }
        return new ClusterSecret(secret, file);
    }

    private static void checkPrivate(Path file, String what) {
        PosixFileAttributeView posix = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        if (posix == null) return; // not a POSIX file system: the operator's access rules apply
        Set<PosixFilePermission> perms;
        try {
            perms = posix.readAttributes().permissions();
        } catch (NoSuchFileException e) {
            throw new EstuaryException(what + " does not exist: make one with `bin/estuary secret generate > " + file
                    + "` and `chmod 600 " + file + "`");
        } catch (IOException e) {
            throw new EstuaryException(what + " cannot be read by this server: " + e, e);
        }
        Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission p : perms) if (OTHERS.contains(p)) open.add(p);
        if (!open.isEmpty()) {
            throw new EstuaryException(what + " is accessible to its group or others ("
                    + PosixFilePermissions.toString(perms) + "), so the secret is not private: run `chmod 600 "
                    + file + "` (readable by its owner, the user running the server, only)");
        }
    }

    /** A new secret of {@link #MIN_BYTES} random bytes, as the file holds it (base64, no line break). */
    public static String generate() {
        byte[] b = new byte[MIN_BYTES];
        new SecureRandom().nextBytes(b);
        try {
            return Base64.getEncoder().encodeToString(b);
        } finally {
            Arrays.fill(b, (byte) 0);
        }
    }

    /** A copy of the secret's bytes (give it to {@code Credentials.cluster} and the server's secret lookup). */
    public byte[] bytes() {
        return secret.clone();
    }

    /** Where it was read from. */
    public Path file() {
        return file;
    }

    @Override
    public String toString() {
        return "cluster secret from " + file;
    }
}
