package io.estuary.common.config;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** Every place configuration values are rendered hides those of secret, token and password keys. */
class SecretKeysTest {
    private static final String SECRET = "hunter2-very-secret-value";

    @Test
    void namesWithSecretTokenOrPasswordAreSecret() {
        assertTrue(SecretKeys.isSecret(AuthConfig.CLUSTER_SECRET_FILE.key()));
        assertTrue(SecretKeys.isSecret(AuthConfig.ADMIN_TOKEN_FILE.key()));
        assertTrue(SecretKeys.isSecret("spark.estuary.auth.applicationSecret"));
        assertTrue(SecretKeys.isSecret("ssl.keystore.PASSWORD"));
        assertFalse(SecretKeys.isSecret(AuthConfig.ENABLED.key()));
        assertFalse(SecretKeys.isSecret(MasterConfig.HTTP_PORT.key()));
        assertEquals(SecretKeys.REDACTED, SecretKeys.shown("x.token", SECRET));
        assertEquals("8080", SecretKeys.shown("x.port", "8080"));
    }

    @Test
    void aConfsTextRedactsSecretValuesAndKeepsTheOthers() {
        EstuaryConf conf = new EstuaryConf()
                .set(AuthConfig.CLUSTER_SECRET_FILE, "/etc/estuary/" + SECRET)
                .set(AuthConfig.ADMIN_TOKEN_FILE, "/etc/estuary/token-" + SECRET)
                .set("some.engine.password", SECRET)
                .set("spark.estuary.auth.applicationSecret", SECRET)
                .set(AuthConfig.ENABLED, "true");
        for (String shown : java.util.Arrays.asList(
                conf.toString(), conf.toRedactedMap().toString(), conf.copy().toString())) {
            assertFalse(shown.contains(SECRET), shown);
            assertTrue(shown.contains(AuthConfig.CLUSTER_SECRET_FILE.key() + "=" + SecretKeys.REDACTED), shown);
            assertTrue(shown.contains("some.engine.password=" + SecretKeys.REDACTED), shown);
            assertTrue(shown.contains(AuthConfig.ENABLED.key() + "=true"), shown);
        }
        // the values themselves are intact for the code that reads them
        assertEquals("/etc/estuary/" + SECRET, conf.get(AuthConfig.CLUSTER_SECRET_FILE));
        assertEquals(SECRET, conf.toMap().get("some.engine.password"));
    }

    @Test
    void aBadValueOfASecretKeyIsReportedWithoutTheValue() {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigType.INT.parse("x.secret.size", SECRET));
        assertTrue(
                e.getMessage().contains("x.secret.size") && e.getMessage().contains(SecretKeys.REDACTED),
                e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
        ConfigException shown = assertThrows(ConfigException.class, () -> ConfigType.INT.parse("x.size", "abc"));
        assertTrue(shown.getMessage().contains("'abc'"), shown.getMessage());
    }
}
