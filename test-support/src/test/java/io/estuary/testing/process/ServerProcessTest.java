package io.estuary.testing.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerProcessTest {
    /** A stand-in server: prints its settings and exits. */
    public static final class EchoMain {
        public static void main(String[] args) {
            System.out.println("setting=" + System.getProperty("estuary.test.setting"));
            System.out.println("conf=" + System.getenv("ESTUARY_CONF_DIR"));
        }
    }

    @Test
    void startsTheClassInAChildJvmWithSettingsAndLogsItsOutput(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("echo.log");
        Process p = ServerProcess.start(
                EchoMain.class.getName(), "64m", Arrays.asList("estuary.test.setting=42"), log, dir);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child JVM exits");
        assertEquals(0, p.exitValue(), ServerProcess.read(log));
        String out = ServerProcess.read(log);
        assertTrue(out.contains("setting=42"), out);
        assertTrue(out.contains("conf=" + dir), out);
    }

    @Test
    void leakReportFailsQuotingIt() {
        ServerProcess.checkNoLeaks("worker 0", "all fine\n");
        AssertionError e = assertThrows(
                AssertionError.class,
                () -> ServerProcess.checkNoLeaks("worker 0", "x\nLEAK: ByteBuf.release() was not called\n"));
        assertTrue(e.getMessage().contains("worker 0") && e.getMessage().contains("LEAK: ByteBuf"), e.getMessage());
    }

    @Test
    void missingLogReadsEmptyAndNobodyListeningReadsNull(@TempDir Path dir) throws Exception {
        assertEquals("", ServerProcess.read(dir.resolve("none.log")));
        Files.write(dir.resolve("a.log"), "text".getBytes(StandardCharsets.UTF_8));
        assertEquals("text", ServerProcess.read(dir.resolve("a.log")));
        assertNull(ServerProcess.httpGet(FreePorts.take(1)[0], "/metrics"));
    }

    @Test
    void freePortsAreDistinct() throws Exception {
        int[] ports = FreePorts.take(6);
        Set<Integer> distinct = new HashSet<>();
        for (int p : ports) distinct.add(p);
        assertEquals(6, distinct.size(), Arrays.toString(ports));
    }
}
