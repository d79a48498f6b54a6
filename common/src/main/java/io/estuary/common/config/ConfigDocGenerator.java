package io.estuary.common.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.List;

/** Writes docs/configuration.md from the declared entries. Run by build/gen-config-docs.sh; a test checks drift. */
public final class ConfigDocGenerator {
    private ConfigDocGenerator() {}

    public static String render() {
        StringBuilder sb = new StringBuilder();
        sb.append("# Configuration\n\n")
                .append(
                        "<!-- Generated from the ConfigEntry declarations in common/src/main/java/io/estuary/common/config. ")
                .append("Do not edit by hand: run build/gen-config-docs.sh. -->\n\n")
                .append(
                        "Servers read `conf/estuary-defaults.conf` (`key value` per line) and `-Dkey=value` overrides. ")
                .append("In Spark, set client keys with a `spark.` prefix, e.g. `spark.estuary.master.endpoints`. ")
                .append("An unknown `estuary.*` key or a malformed value is refused with a message naming the key ")
                .append(
                        "(a key an earlier release had is accepted for one release: see *Renamed and removed keys*).\n\n")
                .append("Sizes take a unit (`64k`, `8m`, `2g`); durations take one too (`200ms`, `30s`, `5min`).\n\n");
        for (ConfigEntry.Scope scope : ConfigEntry.Scope.values()) {
            sb.append("## ").append(title(scope)).append("\n\n");
            sb.append("| Key | Type | Default | Meaning |\n|---|---|---|---|\n");
            for (ConfigEntry<?> e : ConfigRegistry.all()) {
                if (e.scope() != scope) continue;
                String def = e.defaultText() == null
                        ? "(required)"
                        : e.defaultText().isEmpty() ? "(empty)" : "`" + e.defaultText() + "`";
                sb.append("| `")
                        .append(e.key())
                        .append("` | ")
                        .append(e.type().name())
                        .append(" | ")
                        .append(def)
                        .append(" | ")
                        .append(e.doc().replace("|", "\\|"))
                        .append(" |\n");
            }
            sb.append('\n');
        }
        sb.append("## Renamed and removed keys\n\n")
                .append("A key renamed or removed in a release is still accepted during that release (and its patch ")
                .append("releases), with a WARN naming its replacement; a renamed key's value is read as its ")
                .append(
                        "replacement's unless that is set too. From the next release it is refused with a message naming ")
                .append("its replacement. The same holds for `spark.estuary.*` and MapReduce job keys. ")
                .append("Declared in `DeprecatedKeys`.\n\n");
        if (DeprecatedKeys.CURRENT.entries().isEmpty()) {
            sb.append("None: no key has been renamed or removed since release ")
                    .append(io.estuary.common.release.Releases.V0_1_0)
                    .append(".\n\n");
        } else {
            sb.append("| Old key | Replacement | Since release | Accepted through |\n|---|---|---|---|\n");
            for (DeprecatedKeys.Entry e : DeprecatedKeys.CURRENT.entries()) {
                sb.append("| `")
                        .append(e.key())
                        .append("` | ")
                        .append(e.replacement() == null ? "(removed)" : "`" + e.replacement() + "`")
                        .append(" | ")
                        .append(e.since())
                        .append(" | ")
                        .append(e.acceptedThrough())
                        .append(" |\n");
            }
            sb.append('\n');
        }
        sb.append("## Rules between keys\n\n")
                .append("Checked by `ConfigCheck` (build/check-deploy.sh) on a server's configuration file.\n\n");
        List<ConfigRule> rules = ConfigRegistry.rules();
        rules.sort(Comparator.comparing(ConfigRule::describe)); // declaration order depends on which class loads first
        for (ConfigRule rule : rules) {
            sb.append("- ").append(rule.describe("`")).append('\n');
        }
        return sb.toString();
    }

    private static String title(ConfigEntry.Scope scope) {
        switch (scope) {
            case SERVER:
                return "Servers (master and worker)";
            case CLIENT:
                return "Client (Spark: prefix with `spark.`)";
            default:
                return "Servers and client";
        }
    }

    public static void main(String[] args) throws IOException {
        Path out = Paths.get(args.length > 0 ? args[0] : "docs/configuration.md");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.write(out, render().getBytes(StandardCharsets.UTF_8));
        System.out.println("wrote " + out);
    }
}
