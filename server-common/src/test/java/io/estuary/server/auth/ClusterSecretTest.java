package io.estuary.server.auth;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.util.EstuaryException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading the cluster secret: every refusal says why and what to do, and never shows the secret. */
class ClusterSecretTest {
    @TempDir
    Path dir;

    private Path file(String content, String perms) throws Exception {
        Path f = dir.resolve("cluster.secret");
        Files.write(f, content.getBytes(StandardCharsets.US_ASCII));
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(perms));
        return f;
    }

    private static EstuaryConf enabled(Path file) {
        return new EstuaryConf()
                .set(AuthConfig.ENABLED, "true")
                .set(AuthConfig.CLUSTER_SECRET_FILE, file == null ? "" : file.toString());
    }

    @Test
    void aGeneratedSecretLoadsFromAPrivateFile() throws Exception {
        String generated = ClusterSecret.generate();
        assertEquals(32, Base64.getDecoder().decode(generated).length);
        assertNotEquals(generated, ClusterSecret.generate(), "random each time");
        Path f = file(generated + "\n", "rw-------");
        ClusterSecret s = ClusterSecret.load(enabled(f));
        assertArrayEquals(Base64.getDecoder().decode(generated), s.bytes());
        assertFalse(s.toString().contains(generated), "never printed");
        assertEquals(f, s.file());
        assertEquals(f, ClusterSecret.read(file(generated, "r--------")).file(), "read-only for the owner is fine");
    }

    @Test
    void authenticationOffNeedsNoSecret() {
        assertNull(ClusterSecret.load(new EstuaryConf().set(AuthConfig.ENABLED, "false")));
    }

    @Test
    void anUnsetKeySaysHowToMakeASecret() {
        EstuaryException e = assertThrows(EstuaryException.class, () -> ClusterSecret.load(enabled(null)));
        assertTrue(e.getMessage().contains("estuary.auth.cluster.secretFile is not set"), e.getMessage());
        assertTrue(e.getMessage().contains("bin/estuary secret generate > FILE"), e.getMessage());
    }

    @Test
    void byDefaultAServerNeedsASecretAndIsToldHowToMakeOneOrTurnAuthenticationOff() {
        EstuaryException e = assertThrows(EstuaryException.class, () -> ClusterSecret.load(new EstuaryConf()));
        assertTrue(e.getMessage().contains("bin/estuary secret generate > FILE"), e.getMessage());
        assertTrue(e.getMessage().contains("chmod 600 FILE"), e.getMessage());
        assertTrue(e.getMessage().contains("estuary.auth.enabled=false"), e.getMessage());
    }

    @Test
    void aMissingFileIsNamed() {
        Path missing = dir.resolve("nope");
        EstuaryException e = assertThrows(EstuaryException.class, () -> ClusterSecret.load(enabled(missing)));
        assertTrue(e.getMessage().contains(missing + " does not exist"), e.getMessage());
        assertTrue(e.getMessage().contains("bin/estuary secret generate > " + missing), e.getMessage());
    }

    @Test
    void aGroupOrWorldAccessibleFileIsRefusedWithTheFix() throws Exception {
        String secret = ClusterSecret.generate();
        for (String perms : new String[] {"rw-r-----", "rw----r--", "rw-rw-rw-", "rw-----w-"}) {
            Path f = file(secret, perms);
            EstuaryException e = assertThrows(EstuaryException.class, () -> ClusterSecret.read(f), perms);
            assertTrue(e.getMessage().contains("chmod 600 " + f), e.getMessage());
            assertTrue(e.getMessage().contains(perms), e.getMessage());
            assertFalse(e.getMessage().contains(secret), "the secret is never shown");
        }
    }

    @Test
    void aShortOrMalformedSecretIsRefused() throws Exception {
        Path shortFile = file(Base64.getEncoder().encodeToString(new byte[31]), "rw-------");
        EstuaryException e = assertThrows(EstuaryException.class, () -> ClusterSecret.read(shortFile));
        assertTrue(e.getMessage().contains("holds 31 bytes, fewer than the 32 required"), e.getMessage());

        Path garbage = file("not base64 at all!", "rw-------");
        EstuaryException g = assertThrows(EstuaryException.class, () -> ClusterSecret.read(garbage));
        assertTrue(g.getMessage().contains("does not hold a base64 secret"), g.getMessage());
        assertFalse(g.getMessage().contains("not base64 at all"), "the content is not shown");
    }

    @Test
    void anUnreadableFileIsRefused() throws Exception {
        Path f = file(ClusterSecret.generate(), "-w-------");
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.isReadable(f), "root reads every file");
        EstuaryException e = assertThrows(EstuaryException.class, () -> ClusterSecret.read(f));
        assertTrue(e.getMessage().contains("cannot be read by this server"), e.getMessage());
    }
}
