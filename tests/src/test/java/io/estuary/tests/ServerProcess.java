package io.estuary.tests;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts an Estuary server class in its own JVM with the test class path, the way sbin/ starts it. */
final class ServerProcess {
    private ServerProcess() {}

    /** Netty tracks every buffer of the server and logs each one collected unreleased. */
    static final String PARANOID = "-Dio.netty.leakDetection.level=paranoid";

    /** Fails when a server's log reports a leaked Netty buffer, quoting the report. */
    static void checkNoLeaks(String server, String log) {
        int at = log.indexOf("LEAK:");
        if (at < 0) return;
        int end = Math.min(log.length(), at + 4000);
        throw new AssertionError(
                server + " leaked a Netty buffer (paranoid leak detection): " + log.substring(at, end));
    }

    /**
     * The servers' class path: the test's own, unless {@code estuary.server.classpath.file} names a file holding one.
     * Tests of old Spark lines need that: Spark's Netty on their class path is not the servers' Netty.
     */
    static String serverClassPath() throws IOException {
        String file = System.getProperty("estuary.server.classpath.file");
        if (file != null) {
            return new String(
                            java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(file)),
                            java.nio.charset.StandardCharsets.UTF_8)
                    .trim();
        }
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }

    /**
     * Starts {@code mainClass} with {@code -Xmx}{@code heap} and each setting as {@code -D<setting>}; output is
     * appended to {@code log}. {@code confDir} holds no conf file, so the settings come from {@code -D} only.
     */
    static Process start(String mainClass, String heap, List<String> settings, Path log, Path confDir)
            throws IOException {
        return start(mainClass, heap, java.util.Collections.emptyList(), settings, log, confDir);
    }

    /** As above, with extra JVM options (e.g. {@code -XX:MaxDirectMemorySize=128m}). */
    static Process start(
            String mainClass, String heap, List<String> jvmOptions, List<String> settings, Path log, Path confDir)
            throws IOException {
        String cp = serverClassPath();
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + "/bin/java");
        cmd.add("-Xmx" + heap);
        cmd.add(PARANOID); // a leak in the server shows in its log; the tests fail on it (see checkNoLeaks)
        cmd.addAll(jvmOptions);
        for (String s : settings) cmd.add("-D" + s);
        cmd.add("-cp");
        cmd.add(cp);
        cmd.add(mainClass);
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().put("ESTUARY_CONF_DIR", confDir.toString());
        return pb.start();
    }
}
