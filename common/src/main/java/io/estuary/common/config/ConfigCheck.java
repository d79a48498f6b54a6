package io.estuary.common.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * Checks a server configuration file ({@code estuary-defaults.conf}) before it is deployed, more strictly than a
 * server reads it: every key must be a declared one (a server ignores keys outside {@code estuary.*}; here they
 * are refused too, since a server file holds nothing else), every value must parse and pass its key's check, no
 * key may appear twice (a server silently keeps the last one), every rule between keys ({@link ConfigRule}, declared
 * beside them) must hold for the file's values and the defaults of the keys it leaves out, and with a role given, the keys that role needs
 * without a default must be present. Used by the deployment checks (build/check-deploy.sh) on the configuration
 * the Helm chart renders.
 *
 * <p>Usage: {@code ConfigCheck [--role master|worker] FILE...}; exits 0 when every file is fine, 1 after listing
 * every problem found, 2 on bad usage. Stateless; safe from any thread.
 */
public final class ConfigCheck {
    private ConfigCheck() {}

    /** Which server reads the file, for the required-key check. */
    public enum Role {
        MASTER,
        WORKER
    }

    /** Every problem in {@code file}, each naming the key; empty when the file is fine. */
    public static List<String> check(Path file, Role role) throws IOException {
        KeyRecorder read = new KeyRecorder();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            read.load(r);
        }
        List<String> problems = new ArrayList<>(read.duplicates);
        EstuaryConf conf = new EstuaryConf();
        Set<String> refused = new HashSet<>();
        for (Map.Entry<String, String> e : read.inOrder.entrySet()) {
            String key = e.getKey().trim();
            if (ConfigRegistry.get(key) == null && DeprecatedKeys.CURRENT.find(key) == null) {
                problems.add("unknown configuration key: " + key);
                continue;
            } // a renamed or removed key is accepted (with a WARN) while DeprecatedKeys says so, refused after
            try {
                conf.set(key, e.getValue().trim());
            } catch (ConfigException ex) {
                problems.add(ex.getMessage());
                refused.add(key);
            }
        }
        for (ConfigRule rule : ConfigRegistry.rules()) {
            if (rule.keys().stream().anyMatch(k -> refused.contains(k.key()))) continue; // already reported
            String broken = rule.check(conf);
            if (broken != null) problems.add(broken);
        }
        if (role != null) {
            String prefix = EstuaryConf.PREFIX + role.name().toLowerCase(java.util.Locale.ROOT) + ".";
            for (ConfigEntry<?> entry : ConfigRegistry.all()) {
                if (entry.defaultText() == null && entry.key().startsWith(prefix) && !conf.contains(entry)) {
                    problems.add(entry.key() + " is required for a "
                            + role.name().toLowerCase(java.util.Locale.ROOT) + " but not set");
                }
            }
        }
        return problems;
    }

    public static void main(String[] args) throws IOException {
        Role role = null;
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--role") && i + 1 < args.length) {
                role = Role.valueOf(args[++i].toUpperCase(java.util.Locale.ROOT));
            } else {
                files.add(Paths.get(args[i]));
            }
        }
        if (files.isEmpty()) {
            System.err.println("usage: ConfigCheck [--role master|worker] FILE...");
            System.exit(2);
        }
        int bad = 0;
        for (Path f : files) {
            List<String> problems = check(f, role);
            for (String p : problems) System.err.println(f + ": " + p);
            if (problems.isEmpty()) {
                System.out.println(f + ": ok");
            } else {
                bad++;
            }
        }
        System.exit(bad == 0 ? 0 : 1);
    }

    /** Reads with the servers' own syntax (java.util.Properties), keeping the order and noting repeated keys. */
    private static final class KeyRecorder extends Properties {
        private static final long serialVersionUID = 1L;
        final transient Map<String, String> inOrder = new LinkedHashMap<>();
        final transient List<String> duplicates = new ArrayList<>();

        @Override
        public synchronized Object put(Object key, Object value) {
            String k = String.valueOf(key).trim();
            if (inOrder.put(k, String.valueOf(value)) != null) duplicates.add("key set more than once: " + k);
            return super.put(key, value);
        }
    }
}
