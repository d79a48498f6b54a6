package io.estuary.testing.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Starts an Estuary server class in its own JVM, the way sbin/ starts it, and reads what the harness needs from it:
 * its log and plain HTTP answers. Uses no Estuary class and no JSON library, so that tests whose own class path holds
 * an old Spark (and its old Jackson and Netty) can start servers too. Stateless.
 */
public final class ServerProcess {
    private ServerProcess() {}

    /** Netty tracks every buffer of the server and logs each one collected unreleased. */
    public static final String PARANOID = "-Dio.netty.leakDetection.level=paranoid";

    /** Fails when a server's log reports a leaked Netty buffer, quoting the report. */
    public static void checkNoLeaks(String server, String log) {
        int at = log.indexOf("LEAK:");
        if (at < 0) return;
        int end = Math.min(log.length(), at + 4000);
        throw new AssertionError(
                server + " leaked a Netty buffer (paranoid leak detection): " + log.substring(at, end));
    }

    /**
     * The servers' class path: the test's own, unless {@code estuary.server.classpath.file} names a file holding one
     * (written by the build). Tests of old Spark lines need that: Spark's Netty and Jackson on their class path are not
     * the servers'.
     */
    public static String serverClassPath() throws IOException {
        String file = System.getProperty("estuary.server.classpath.file");
        if (file != null) return new String(Files.readAllBytes(Paths.get(file)), StandardCharsets.UTF_8).trim();
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }

    /**
     * Starts {@code mainClass} with {@code -Xmx}{@code heap} and each setting as {@code -D<setting>}; output is
     * appended to {@code log}. {@code confDir} holds no conf file, so the settings come from {@code -D} only.
     */
    public static Process start(String mainClass, String heap, List<String> settings, Path log, Path confDir)
            throws IOException {
        return start(mainClass, heap, Collections.<String>emptyList(), settings, log, confDir);
    }

    /** As above, with extra JVM options (e.g. {@code -XX:MaxDirectMemorySize=128m}). */
    public static Process start(
            String mainClass, String heap, List<String> jvmOptions, List<String> settings, Path log, Path confDir)
            throws IOException {
        return start(serverClassPath(), mainClass, heap, jvmOptions, settings, log, confDir);
    }

    /**
     * As above, from {@code classPath} instead of {@link #serverClassPath()}: e.g. {@code <dist>/jars/*} of another
     * release's distribution.
     */
    public static Process start(
            String classPath,
            String mainClass,
            String heap,
            List<String> jvmOptions,
            List<String> settings,
            Path log,
            Path confDir)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + "/bin/java");
        cmd.add("-Xmx" + heap);
        cmd.add(PARANOID); // a leak in the server shows in its log; the tests fail on it (see checkNoLeaks)
        cmd.addAll(jvmOptions);
        for (String s : settings) cmd.add("-D" + s);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(mainClass);
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().put("ESTUARY_CONF_DIR", confDir.toString());
        return pb.start();
    }

    /**
     * Authentication settings of a server of this build, put before the test's {@code settings}: none when those say
     * whether authentication is on; off in a group started with servers of an earlier release (0.1.0 cannot
     * authenticate); else on, with the cluster secret this JVM's server processes share
     * ({@link io.estuary.testing.ClusterSecrets#serverSettings}).
     */
    static List<String> authSettings(boolean withEarlierRelease, List<String> settings) {
        List<String> auth = io.estuary.testing.ClusterSecrets.serverSettings(settings);
        if (auth.isEmpty() || !withEarlierRelease) return auth;
        return java.util.Collections.singletonList("estuary.auth.enabled=false");
    }

    /** The file's text, or "" when it does not exist (yet). */
    public static String read(Path file) throws IOException {
        return Files.exists(file) ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
    }

    /** GET {@code http://127.0.0.1:<port><path>}: the body of a 2xx answer, or null while nothing answers so. */
    public static String httpGet(int port, String path) {
        try {
            HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(5000);
            // Servers of the harness authenticate (the shared cluster secret): admin reads carry its token.
            java.nio.file.Path secret = io.estuary.testing.ClusterSecrets.sharedIfMade();
            if (secret != null) {
                c.setRequestProperty("Authorization", "Bearer " + io.estuary.testing.ClusterSecrets.adminToken(secret));
            }
            try (InputStream in = c.getInputStream()) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                byte[] buf = new byte[8192];
                for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
                return new String(out.toByteArray(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return null;
        }
    }
}
