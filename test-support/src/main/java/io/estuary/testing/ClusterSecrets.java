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
import java.util.Base64;

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

    /** {@code conf} with authentication on (enforced) and the cluster secret in {@code file}. */
    public static EstuaryConf enable(EstuaryConf conf, Path file) {
        return conf.copy()
                .set(AuthConfig.ENABLED.key(), "true")
                .set(AuthConfig.CLUSTER_SECRET_FILE.key(), file.toString());
    }
}
