package io.estuary.master.state.raft;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;

/** Cluster secret files for tests: random secrets, written base64 with owner-only permissions. */
public final class RaftSecretFiles {
    private RaftSecretFiles() {}

    public static byte[] random() {
        byte[] s = new byte[32];
        new SecureRandom().nextBytes(s);
        return s;
    }

    public static Path write(Path file, byte[] secret) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.write(file, Base64.getEncoder().encode(secret));
        return file;
    }
}
