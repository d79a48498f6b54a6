package io.estuary.server.admin;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AdminTokenTest {
    private static final String TOKEN = "s3cr3t-admin-token-0123456789";

    @TempDir
    Path dir;

    private Path file(String name, byte[] content, String perms) throws Exception {
        Path f = dir.resolve(name);
        Files.write(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(perms));
        return f;
    }

    @Test
    void readsTheTokenFileTrimmed() throws Exception {
        Path f = file("token", (" " + TOKEN + "\n").getBytes(StandardCharsets.UTF_8), "rw-------");
        AdminToken t = AdminToken.fromConf(new EstuaryConf().set(AuthConfig.ADMIN_TOKEN_FILE, f.toString()));
        assertEquals(TOKEN, t.value());
        assertTrue(t.matches(TOKEN));
        assertFalse(t.matches(TOKEN + "x"));
        assertFalse(t.matches(TOKEN.substring(1)));
        assertFalse(t.matches(""));
        assertFalse(t.matches(null));
        assertFalse(t.toString().contains(TOKEN), t.toString());
    }

    @Test
    void derivesTheTokenFromTheClusterSecretWhenNoTokenFileIsSet() throws Exception {
        byte[] secret = new byte[32];
        new java.util.Random(7).nextBytes(secret);
        Path f = file("cluster.secret", secret, "r--------");
        AdminToken t = AdminToken.fromConf(new EstuaryConf().set(AuthConfig.CLUSTER_SECRET_FILE, f.toString()));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        byte[] h = mac.doFinal("estuary admin token v1".getBytes(StandardCharsets.UTF_8));
        assertEquals(String.format("%064x", new java.math.BigInteger(1, h)), t.value());
        assertTrue(t.source().contains("derived"), t.source());
        // the token file wins over the derivation
        Path tf = file("token", TOKEN.getBytes(StandardCharsets.UTF_8), "rw-------");
        assertEquals(
                TOKEN,
                AdminToken.fromConf(new EstuaryConf()
                                .set(AuthConfig.CLUSTER_SECRET_FILE, f.toString())
                                .set(AuthConfig.ADMIN_TOKEN_FILE, tf.toString()))
                        .value());
        assertNull(AdminToken.fromConf(new EstuaryConf()));
    }

    @Test
    void refusesFilesOthersMayReadOrWriteAndNeverShowsTheirContent() throws Exception {
        for (String perms : new String[] {"rw-r-----", "rw----r--", "rw--w----", "rw-rw-rw-"}) {
            Path f = file("token-" + perms, TOKEN.getBytes(StandardCharsets.UTF_8), perms);
            ConfigException e = assertThrows(
                    ConfigException.class,
                    () -> AdminToken.fromConf(new EstuaryConf().set(AuthConfig.ADMIN_TOKEN_FILE, f.toString())));
            assertTrue(e.getMessage().contains("readable by its owner only"), e.getMessage());
            assertTrue(e.getMessage().contains(AuthConfig.ADMIN_TOKEN_FILE.key()), e.getMessage());
            assertFalse(e.getMessage().contains(TOKEN), e.getMessage());
            Path s = file("secret-" + perms, TOKEN.getBytes(StandardCharsets.UTF_8), perms);
            e = assertThrows(ConfigException.class, () -> AdminToken.derivedFrom(s, "secret"));
            assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
        }
    }

    @Test
    void refusesMissingShortAndUnprintableTokens() throws Exception {
        ConfigException missing =
                assertThrows(ConfigException.class, () -> AdminToken.fromFile(dir.resolve("nope"), "--token-file"));
        assertTrue(missing.getMessage().contains("no such file"), missing.getMessage());
        Path shortOne = file("short", "abc\n".getBytes(StandardCharsets.UTF_8), "rw-------");
        ConfigException tooShort =
                assertThrows(ConfigException.class, () -> AdminToken.fromFile(shortOne, "--token-file"));
        assertTrue(tooShort.getMessage().contains("too short"), tooShort.getMessage());
        assertFalse(tooShort.getMessage().contains("abc"), tooShort.getMessage());
        Path spaced = file("spaced", "two words make a token".getBytes(StandardCharsets.UTF_8), "rw-------");
        ConfigException bad = assertThrows(ConfigException.class, () -> AdminToken.fromFile(spaced, "--token-file"));
        assertTrue(bad.getMessage().contains("position 3"), bad.getMessage());
        assertFalse(bad.getMessage().contains("words"), bad.getMessage());
        Path empty = file("empty", new byte[0], "rw-------");
        assertThrows(ConfigException.class, () -> AdminToken.derivedFrom(empty, "secret"));
    }
}
