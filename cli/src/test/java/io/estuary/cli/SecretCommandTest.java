package io.estuary.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.server.auth.ClusterSecret;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code estuary secret generate > FILE}: what it prints is what a server loads, and it needs no master. */
class SecretCommandTest {
    @TempDir
    Path dir;

    @Test
    void generatePrintsASecretServersLoad() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = EstuaryCli.run(
                new String[] {"--master", "127.0.0.1:1", "secret", "generate"},
                new PrintStream(out, true, "UTF-8"),
                new PrintStream(err, true, "UTF-8"));
        assertEquals(0, code, err.toString("UTF-8"));
        Path file = dir.resolve("cluster.secret");
        Files.write(file, out.toByteArray());
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertEquals(ClusterSecret.MIN_BYTES, ClusterSecret.read(file).bytes().length);
        assertEquals(1, new String(out.toByteArray(), StandardCharsets.UTF_8).split("\n").length, "one line");
    }

    @Test
    void anUnknownSecretCommandIsAUsageError() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = EstuaryCli.run(
                new String[] {"secret", "show"}, new PrintStream(new ByteArrayOutputStream()), new PrintStream(err));
        assertEquals(CliException.USAGE, code);
        assertTrue(err.toString().contains("unknown secret command 'show'"), err.toString());
    }
}
