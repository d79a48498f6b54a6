package io.estuary.master.state;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.master.protocol.ApplicationRegistered;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.state.raft.RaftSecretFiles;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Turning authentication on in a running group of three masters, one master at a time, as docs/upgrading.md says:
 * from masters without authentication, each restarted permissive, then each restarted enforcing. At every step the
 * group commits and the restarted master catches up; the permissive masters admit their plain peers and speak to
 * them plainly; at the end every master authenticates every peer and still learns which formats the others apply
 * (a question asked over the Raft port).
 */
class RaftAuthenticationRolloutTest {
    private Path dir;
    private Path secret;
    private MasterNodes nodes;
    private final RatisStateLog[] masters = new RatisStateLog[3];
    private int registered;

    @BeforeEach
    void start() throws IOException {
        dir = Files.createTempDirectory("estuary-raft-rollout");
        secret = RaftSecretFiles.write(dir.resolve("cluster.secret"), RaftSecretFiles.random());
        List<String> entries = new ArrayList<>();
        for (int i = 0; i < 3; i++) entries.add("m" + i + "=127.0.0.1:" + freePort() + ":" + freePort());
        nodes = MasterNodes.parse(entries);
        for (int i = 0; i < 3; i++) masters[i] = start(i, "off");
    }

    @AfterEach
    void stop() throws IOException {
        for (RatisStateLog m : masters) if (m != null) m.close();
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    @Test
    void aGroupTurnsAuthenticationOnOneMasterAtATimeWithoutStopping() throws Exception {
        commitAndCatchUp();

        long admitted = 0;
        for (int i = 0; i < 3; i++) {
            admitted += restart(i, "permissive");
            commitAndCatchUp();
        }
        for (int i = 0; i < 3; i++) admitted += masters[i].raftUnauthenticatedAdmitted();
        assertTrue(admitted > 0, "permissive masters admitted the masters that did not authenticate yet");

        // In the other order: m0, permissive since the first pass, spoke plainly to m1 and m2 (then without
        // authentication) and must turn to the handshake when they refuse that.
        for (int i = 2; i >= 0; i--) {
            restart(i, "enforce");
            commitAndCatchUp();
        }
        for (int i = 0; i < 3; i++) {
            assertEquals(0, masters[i].raftUnauthenticatedAdmitted(), "an enforcing master admits no plain peer");
            for (int j = 0; j < 3; j++) {
                if (i == j) continue;
                RatisStateLog asking = masters[i];
                String other = "m" + j;
                waitFor(
                        () -> GroupFormats.ours().equals(asking.groupFormats().reportedBy(other)),
                        120_000,
                        "m" + i + " learns " + other + "'s formats over the authenticated Raft port");
            }
        }
    }

    /** Restarts master {@code i} in {@code mode}; returns what its previous run admitted without a proof. */
    private long restart(int i, String mode) throws IOException {
        long admitted = masters[i].raftUnauthenticatedAdmitted();
        masters[i].close();
        masters[i] = null;
        masters[i] = start(i, mode);
        return admitted;
    }

    private void commitAndCatchUp() throws Exception {
        waitFor(() -> leader() != null, 60_000, "a leader");
        String app = "app-" + registered++;
        leader().submit(MasterCommand.newBuilder()
                        .setApplicationRegistered(
                                ApplicationRegistered.newBuilder().setAppId(app))
                        .build())
                .get(60, TimeUnit.SECONDS);
        byte[] committed = leader().stateMachine().snapshot().toByteArray();
        for (RatisStateLog m : masters) {
            waitFor(
                    () -> Arrays.equals(committed, m.stateMachine().snapshot().toByteArray()),
                    60_000,
                    "every master applies " + app);
        }
    }

    private RatisStateLog leader() {
        for (RatisStateLog m : masters) if (m.isLeader()) return m;
        return null;
    }

    private RatisStateLog start(int i, String mode) throws IOException {
        EstuaryConf conf = new EstuaryConf()
                .set(MasterConfig.HA_DIR, dir.toString())
                .set(MasterConfig.HA_ELECTION_TIMEOUT, "300ms");
        if (mode.equals("off")) {
            conf.set(AuthConfig.ENABLED, "false");
        } else {
            conf.set(AuthConfig.ENABLED, "true")
                    .set(AuthConfig.MODE, mode)
                    .set(AuthConfig.CLUSTER_SECRET_FILE, secret.toString());
        }
        return new RatisStateLog(conf, nodes, "m" + i, () -> {});
    }

    private static int freePort() throws IOException {
        return io.estuary.testing.process.FreePorts.take(1)[0]; // outside the ephemeral range (see FreePorts)
    }
}
