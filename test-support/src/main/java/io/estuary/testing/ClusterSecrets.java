package io.estuary.testing;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;

/**
 * Cluster secrets for tests of authenticated servers: a file as {@code bin/estuary secret generate} writes one (32
 * random bytes, base64), readable by its owner only, and the server configuration that uses it. Stateless.
 */
public final class ClusterSecrets {
    private ClusterSecrets() {}

    /** A new cluster secret file in {@code dir}, mode 600. */
    public static Path newFile(Path dir) {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        try {
            Path f = Files.createTempFile(dir, "cluster-secret", "");
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
            Files.write(f, (Base64.getEncoder().encodeToString(secret) + "\n").getBytes(StandardCharsets.US_ASCII));
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The cluster secret in a file {@link #newFile} wrote. */
    public static byte[] read(Path file) {
        try {
            return Base64.getDecoder().decode(new String(Files.readAllBytes(file), StandardCharsets.US_ASCII).trim());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path shared;

    /**
     * The cluster secret file that server processes of this JVM's tests share by default ({@link #serverSettings}),
     * made on first use in a temporary folder and deleted when the JVM exits.
     */
    public static synchronized Path shared() {
        if (shared == null) {
            try {
                Path dir = Files.createTempDirectory("estuary-test-secret");
                shared = newFile(dir);
                shared.toFile().deleteOnExit();
                dir.toFile().deleteOnExit();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return shared;
    }

    /** {@link #shared()} if some test made it, else null. */
    public static synchronized Path sharedIfMade() {
        return shared;
    }

    /**
     * The {@code key=value} settings a server process of this build starts with before {@code settings}: with
     * authentication on by default, the {@link #shared()} cluster secret; none when {@code settings} say whether
     * authentication is on.
     */
    public static List<String> serverSettings(List<String> settings) {
        for (String s : settings) {
            if (s.startsWith(AuthConfig.ENABLED.key() + "=")) return Collections.emptyList();
        }
        return Arrays.asList(AuthConfig.ENABLED.key() + "=true", AuthConfig.CLUSTER_SECRET_FILE.key() + "=" + shared());
    }

    /**
     * The admin HTTP token the servers derive from the cluster secret in {@code file} when no token file is set: hex
     * of HMAC-SHA256 keyed with the file's bytes over "estuary admin token v1" (as server-common's AdminToken, which
     * this module cannot see; AdminAuthenticationTest uses that one against servers that use {@link #shared()}).
     */
    public static String adminToken(Path file) {
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(Files.readAllBytes(file), "HmacSHA256"));
            byte[] h = mac.doFinal("estuary admin token v1".getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder();
            for (byte b : h) hex.append(String.format("%02x", b));
            return hex.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A fresh application secret (32 random bytes, base64), as a lifecycle manager makes one. */
    public static String newApplicationSecret() {
        byte[] secret = new byte[32];
        new java.security.SecureRandom().nextBytes(secret);
        return java.util.Base64.getEncoder().encodeToString(secret);
    }

    /** A client's configuration with authentication on (the default) and a fresh application secret. */
    public static EstuaryConf clientWithApplicationSecret() {
        return new EstuaryConf().set(AuthConfig.APPLICATION_SECRET.key(), newApplicationSecret());
    }

    /** {@code conf} with authentication on (enforced) and the cluster secret in {@code file}. */
    public static EstuaryConf enable(EstuaryConf conf, Path file) {
        return conf.copy()
                .set(AuthConfig.ENABLED.key(), "true")
                .set(AuthConfig.CLUSTER_SECRET_FILE.key(), file.toString());
    }
}
