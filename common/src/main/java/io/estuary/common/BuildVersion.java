package io.estuary.common;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The release a server runs: the Maven project version written into {@code estuary-version.properties} at build
 * time, unless {@code estuary.version.override} (or, when that is empty, the environment variable
 * {@code ESTUARY_VERSION}) names another, so that an upgrade can be rehearsed with one build. Stateless.
 */
public final class BuildVersion {
    /** Environment variable read when {@link NetworkConfig#VERSION_OVERRIDE} is empty. */
    public static final String ENV = "ESTUARY_VERSION";

    private static final String BUILT = readBuilt();

    private BuildVersion() {}

    /** The version this build was made as ("unknown" when the resource is missing, e.g. run from an IDE). */
    public static String built() {
        return BUILT;
    }

    /** The version a server started with {@code conf} reports. */
    public static String of(EstuaryConf conf) {
        String v = conf.get(NetworkConfig.VERSION_OVERRIDE).trim();
        if (!v.isEmpty()) return v;
        String env = System.getenv(ENV);
        return env != null && !env.trim().isEmpty() ? env.trim() : BUILT;
    }

    private static String readBuilt() {
        try (InputStream in = BuildVersion.class.getResourceAsStream("/estuary-version.properties")) {
            if (in == null) return "unknown";
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "unknown");
            return v.startsWith("${") ? "unknown" : v; // not filtered: built outside Maven
        } catch (IOException e) {
            return "unknown";
        }
    }
}
