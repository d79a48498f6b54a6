package io.estuary.bench;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.server.auth.ClusterSecret;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Authentication of the benchmarks' in-process clusters, on as by default: the servers' cluster secret (a private file,
 * as {@code bin/estuary secret generate} writes it) and each application's secret (what an engine hands its driver
 * and executors). Stateless.
 */
final class BenchSecrets {
    private BenchSecrets() {}

    /** A new cluster secret file in {@code dir}, readable by its owner only. */
    static Path clusterSecretFile(Path dir) throws IOException {
        Path f = dir.resolve("cluster.secret");
        Files.createFile(f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.write(f, ClusterSecret.generate().getBytes(StandardCharsets.US_ASCII));
        return f;
    }

    /** {@code conf} of a master or worker that proves the secret in {@code file}. */
    static EstuaryConf server(EstuaryConf conf, Path file) {
        return conf.set(AuthConfig.CLUSTER_SECRET_FILE, file.toString());
    }

    /** {@code conf} of an application's driver and executors, with a new application secret. */
    static EstuaryConf application(EstuaryConf conf) {
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        return conf.set(AuthConfig.APPLICATION_SECRET, Base64.getEncoder().encodeToString(secret));
    }
}
