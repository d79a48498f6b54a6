package io.estuary.master.state;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Base64;
import java.util.Set;

/**
 * Reads the cluster secret for the Raft transport from {@code estuary.auth.cluster.secretFile}: the file must exist,
 * be readable by its owner only, and hold at least 32 bytes (base64 text, or raw bytes when it is not base64).
 * Stand-in until the shared loader (ClusterSecret, branch auth-core) is merged; the messages never show the secret.
 * Stateless.
 */
final class RaftClusterSecret {
    private RaftClusterSecret() {}

    static final int MIN_BYTES = 32;

    static byte[] load(EstuaryConf conf) throws IOException {
        String name = conf.get(AuthConfig.CLUSTER_SECRET_FILE);
        if (name == null || name.isEmpty()) {
            throw new IOException(AuthConfig.ENABLED.key() + " is true but " + AuthConfig.CLUSTER_SECRET_FILE.key()
                    + " is not set: make one with `bin/estuary secret generate > FILE` (then chmod 600 FILE)");
        }
        Path file = Paths.get(name);
        if (!Files.isRegularFile(file)) throw new IOException("the cluster secret file " + file + " does not exist");
        try {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
            for (PosixFilePermission p : perms) {
                if (p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_")) {
                    throw new IOException("the cluster secret file " + file + " is readable or writable by others ("
                            + java.nio.file.attribute.PosixFilePermissions.toString(perms)
                            + "): make it readable by its owner only (chmod 600)");
                }
            }
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system: its own access control applies.
        }
        byte[] raw = Files.readAllBytes(file);
        byte[] secret = decode(raw);
        if (secret.length < MIN_BYTES) {
            throw new IOException("the cluster secret in " + file + " is too short (" + secret.length
                    + " bytes, at least " + MIN_BYTES + "): make one with `bin/estuary secret generate > FILE`");
        }
        return secret;
    }

    private static byte[] decode(byte[] raw) {
        String text = new String(raw, StandardCharsets.ISO_8859_1).trim();
        if (!text.isEmpty() && text.matches("[A-Za-z0-9+/=\\r\\n]+")) {
            try {
                return Base64.getMimeDecoder().decode(text);
            } catch (IllegalArgumentException notBase64) {
                // raw bytes that happen to look like text
            }
        }
        return raw;
    }
}
