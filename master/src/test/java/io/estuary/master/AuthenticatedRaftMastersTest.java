package io.estuary.master;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.master.state.raft.RaftSecretFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;

/**
 * Every test of {@link RaftMastersTest} (election, redirects, failover, snapshot install to a wiped master,
 * leadership transfer, restarts) again, with the masters authenticating each other on their Raft ports.
 */
class AuthenticatedRaftMastersTest extends RaftMastersTest {
    private Path secretDir;

    @Override
    EstuaryConf tune(EstuaryConf conf) {
        try {
            if (secretDir == null) {
                secretDir = Files.createTempDirectory("estuary-raft-secret");
                RaftSecretFiles.write(secretDir.resolve("cluster.secret"), RaftSecretFiles.random());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // Permissive, so that these tests' requests keep registering applications implicitly, as RaftMastersTest's do
        // (secrets are ApplicationSecretsTest's). Masters that all know the secret still authenticate each other: a
        // permissive master opens every Raft connection with the handshake, and falls back only for a peer that
        // never admits it (RaftAuthenticationRolloutTest).
        return super.tune(conf)
                .set(AuthConfig.ENABLED, "true")
                .set(AuthConfig.MODE, "permissive")
                .set(
                        AuthConfig.CLUSTER_SECRET_FILE,
                        secretDir.resolve("cluster.secret").toString());
    }

    @AfterEach
    void removeSecret() throws IOException {
        if (secretDir != null) {
            Files.deleteIfExists(secretDir.resolve("cluster.secret"));
            Files.deleteIfExists(secretDir);
        }
    }
}
