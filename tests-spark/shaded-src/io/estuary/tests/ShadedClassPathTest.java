package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Spark 3.x/4.x modules of tests-spark run the jobs of ../../tests (SparkShuffleTest, WorkerLossTest...) with
 * the line's shaded client jar as the only Estuary client on the test class path, the jar users deploy; the servers
 * run in their own JVMs from ../servers' class path. This checks that premise, so that a pom change cannot quietly
 * put the module classes back: the shuffle manager comes from the shaded jar, the client uses the Netty and lz4-java
 * relocated inside it, and no server or unshaded Estuary class is on the class path. Leaks of the relocated Netty
 * fail every test class of these modules ({@link ShadedLeakCheckExtension}, registered through META-INF/services).
 */
class ShadedClassPathTest {

    @Test
    void theShadedJarIsTheOnlyEstuaryClient() throws Exception {
        URL shaded = new File(System.getProperty("estuary.shaded.jar"))
                .getCanonicalFile()
                .toURI()
                .toURL();
        assertEquals(
                shaded,
                Class.forName(SparkSessions.MANAGER)
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation(),
                "the shuffle manager's jar");
        List<URL> copies = Collections.list(
                getClass().getClassLoader().getResources("io/estuary/common/config/EstuaryConf.class"));
        List<String> outside = new ArrayList<>();
        for (URL u : copies) {
            if (!u.toString().startsWith("jar:" + shaded + "!")) outside.add(u.toString());
        }
        assertTrue(outside.isEmpty(), "Estuary classes outside the shaded jar: " + outside);
        assertEquals(1, copies.size(), "copies of EstuaryConf: " + copies);
        for (String server : new String[] {"io.estuary.master.Master", "io.estuary.worker.Worker"}) {
            assertThrows(ClassNotFoundException.class, () -> Class.forName(server), server + " on the class path");
        }
        assertEquals(
                "io.estuary.shaded.io.netty.channel.Channel",
                Class.forName("io.estuary.network.client.TransportClient")
                        .getDeclaredField("channel")
                        .getType()
                        .getName());
        assertNull(
                ShadedLeakDetector.notInstalledReason(),
                "ShadedLeakCheckExtension was not registered (META-INF/services of ../shaded-resources)");
        assertEquals(
                "io.estuary.shaded.net.jpountz.lz4.LZ4Factory",
                Class.forName("io.estuary.client.batch.Lz4Blocks")
                        .getDeclaredField("LZ4")
                        .getType()
                        .getName());
    }
}
