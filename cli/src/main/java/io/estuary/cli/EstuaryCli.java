package io.estuary.cli;

import io.estuary.common.config.ConfigException;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.server.admin.AdminToken;
import io.estuary.server.admin.AdminViews;
import io.estuary.server.auth.ClusterSecret;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code bin/estuary}: the operator's command line over the masters' admin API (docs/rest-api.md). Asks any master
 * and follows the leader for changes; prints tables, or with {@code --json} the API's JSON ({@link AdminViews}, or
 * {@link CliViews} for what it joins from several masters); exits 0 on success,
 * 1 when a master refuses or something named does not exist, 2 on a bad command line, 3 when no master answers or
 * leads. Sends the admin token when it finds one ({@link #token}) and never prints it. Warns when nodes run different versions (a rolling upgrade under way). Stateless between runs. This class
 * parses the command line and dispatches; {@link ClusterCommands} runs the commands.
 */
public final class EstuaryCli {
    static final String USAGE = String.join(
            "\n",
            "usage: estuary [--master host:httpPort[,host:httpPort...]] [--token-file FILE] [--tls] [--trust-file FILE]",
            "               [--json] <command> [args]",
            "commands:",
            "  status                         cluster overview: leader, term, masters, workers, versions",
            "  masters                        masters with role, term and version",
            "  workers                        workers with state, version and disks",
            "  apps                           applications and how many shuffles each has",
            "  shuffles [app]                 shuffles with partitions and workers (of one application)",
            "  exclude <worker>               give a worker no new slots",
            "  activate <worker>              give it slots again",
            "  decommission <worker>          drain a worker: no new slots, it exits once its shuffles are gone",
            "  transfer-leadership <masterId> hand leadership to another master",
            QuotaCommands.USAGE,
            TagCommands.USAGE,
            "  secret generate                print a new cluster secret (for estuary.auth.cluster.secretFile:",
            "                                 `estuary secret generate > FILE && chmod 600 FILE`)",
            "A worker is host:rpcPort:pushPort:fetchPort, or host:rpcPort when that is unambiguous.",
            "Without --master: $ESTUARY_MASTERS, else the masters' hosts in $ESTUARY_CONF_DIR/estuary-defaults.conf",
            "with estuary.master.http.port.",
            "The admin token (masters with estuary.auth.enabled=true): --token-file FILE, else $ESTUARY_ADMIN_TOKEN_FILE,",
            "else estuary.auth.admin.tokenFile in that file, else derived from its estuary.auth.cluster.secretFile.",
            "HTTPS (masters with estuary.tls.admin.enabled=true): --tls, --trust-file CA.pem (implies --tls), or",
            "estuary.tls.admin.* in that file (enabled, trustFile; clientAuth with certFile and keyFile).");

    private final PrintStream out;
    private final PrintStream err;

    private EstuaryCli(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command; returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        EstuaryCli cli = new EstuaryCli(out, err);
        try {
            cli.execute(args);
            return 0;
        } catch (CliException e) {
            err.println("estuary: " + e.getMessage());
            if (e.exitCode() == CliException.USAGE) err.println(USAGE);
            return e.exitCode();
        }
    }

    private void execute(String[] args) throws CliException {
        List<String> words = new ArrayList<>();
        boolean json = false;
        String masterList = null;
        String tokenFile = null;
        boolean tlsOption = false;
        String trustFile = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--json")) {
                json = true;
            } else if (a.equals("--master") || a.equals("--masters")) {
                if (i + 1 == args.length) throw usage("--master needs host:port[,host:port...]");
                masterList = args[++i];
            } else if (a.startsWith("--master=")) {
                masterList = a.substring("--master=".length());
            } else if (a.equals("--token-file")) {
                if (i + 1 == args.length) throw usage("--token-file needs a file");
                tokenFile = args[++i];
            } else if (a.startsWith("--token-file=")) {
                tokenFile = a.substring("--token-file=".length());
            } else if (a.equals("--tls")) {
                tlsOption = true;
            } else if (a.equals("--trust-file")) {
                if (i + 1 == args.length) throw usage("--trust-file needs a PEM file of CA certificates");
                trustFile = args[++i];
            } else if (a.startsWith("--trust-file=")) {
                trustFile = a.substring("--trust-file=".length());
            } else if (a.equals("-h") || a.equals("--help") || a.equals("help")) {
                out.println(USAGE);
                return;
            } else if (a.startsWith("-")) {
                throw usage("unknown option " + a);
            } else {
                words.add(a);
            }
        }
        if (words.isEmpty()) throw usage("give a command");
        if (words.get(0).equals("secret")) { // local: needs no master
            List<String> rest = words.subList(1, words.size());
            args("secret", rest, 1, 1);
            if (!rest.get(0).equals("generate")) throw usage("unknown secret command '" + rest.get(0) + "'");
            out.println(ClusterSecret.generate());
            return;
        }
        List<String> endpoints = masterList != null ? split(masterList) : defaultMasters();
        String[] whyNone = new String[1];
        AdminToken token = token(tokenFile, whyNone);
        MasterHttp masters =
                new MasterHttp(endpoints, token, whyNone[0], AdminTls.fromConf(conf(), tlsOption, trustFile));
        ClusterCommands commands = new ClusterCommands(masters, json, out, err);
        String cmd = words.get(0);
        List<String> rest = words.subList(1, words.size());
        switch (cmd) {
            case "status":
                args(cmd, rest, 0, 0);
                commands.status();
                break;
            case "masters":
                args(cmd, rest, 0, 0);
                commands.masters();
                break;
            case "workers":
                args(cmd, rest, 0, 0);
                commands.workers();
                break;
            case "apps":
            case "applications":
                args(cmd, rest, 0, 0);
                commands.apps();
                break;
            case "shuffles":
                args(cmd, rest, 0, 1);
                commands.shuffles(rest.isEmpty() ? null : rest.get(0));
                break;
            case "exclude":
            case "activate":
            case "decommission":
                args(cmd, rest, 1, 1);
                commands.setState(cmd, rest.get(0));
                break;
            case "quota":
            case "quotas":
                new QuotaCommands(masters, json, out).run(rest);
                break;
            case "tags":
                new TagCommands(masters, commands, json, out).run(rest);
                break;
            case "transfer-leadership":
                args(cmd, rest, 1, 1);
                commands.transfer(rest.get(0));
                break;
            default:
                throw usage("unknown command '" + cmd + "'");
        }
    }

    // ---- helpers ----

    private static void args(String cmd, List<String> rest, int min, int max) throws CliException {
        if (rest.size() < min || rest.size() > max) {
            throw usage(cmd + " takes " + (min == max ? String.valueOf(min) : min + " to " + max) + " argument"
                    + (max == 1 ? "" : "s") + ", got " + rest.size());
        }
    }

    private static CliException usage(String why) {
        return new CliException(CliException.USAGE, why);
    }

    private static List<String> split(String list) throws CliException {
        List<String> out = new ArrayList<>();
        for (String s : list.split(",")) if (!s.trim().isEmpty()) out.add(s.trim());
        if (out.isEmpty()) throw usage("--master names no master");
        for (String s : out) if (s.lastIndexOf(':') <= 0) throw usage("master '" + s + "' is not host:httpPort");
        return out;
    }

    /**
     * The admin token: {@code --token-file}, else {@code $ESTUARY_ADMIN_TOKEN_FILE} (either must load, else exit 2),
     * else what the configuration file gives ({@link AdminToken#fromConf}); null when there is none, with why in
     * {@code whyNone[0]} when the configuration names one that cannot be read (said only if a master asks for one).
     */
    private static AdminToken token(String tokenFile, String[] whyNone) throws CliException {
        String env = System.getenv("ESTUARY_ADMIN_TOKEN_FILE");
        String given =
                tokenFile != null ? tokenFile : env != null && !env.trim().isEmpty() ? env.trim() : null;
        String what = tokenFile != null ? "--token-file" : "$ESTUARY_ADMIN_TOKEN_FILE";
        try {
            if (given != null) return AdminToken.fromFile(Paths.get(given), what);
        } catch (ConfigException e) {
            throw usage(e.getMessage());
        }
        try {
            return AdminToken.fromConf(conf());
        } catch (CliException | ConfigException e) {
            whyNone[0] = e.getMessage();
            return null;
        }
    }

    /** $ESTUARY_CONF_DIR/estuary-defaults.conf (default dir: conf), or an empty conf when there is none. */
    private static EstuaryConf conf() throws CliException {
        String dir = System.getenv("ESTUARY_CONF_DIR") == null ? "conf" : System.getenv("ESTUARY_CONF_DIR");
        Path file = Paths.get(dir, "estuary-defaults.conf");
        if (!Files.exists(file)) return new EstuaryConf();
        try {
            return EstuaryConf.load(file);
        } catch (IOException | RuntimeException e) {
            throw new CliException(CliException.USAGE, "cannot read " + file + ": " + e.getMessage());
        }
    }

    /** $ESTUARY_MASTERS, else the masters' hosts in estuary-defaults.conf with their HTTP port, else localhost. */
    private static List<String> defaultMasters() throws CliException {
        String env = System.getenv("ESTUARY_MASTERS");
        if (env != null && !env.trim().isEmpty()) return split(env);
        EstuaryConf conf = conf();
        int http = conf.get(MasterConfig.HTTP_PORT);
        List<String> hosts = new ArrayList<>();
        for (String node : conf.get(MasterConfig.HA_NODES)) {
            hosts.add(node.substring(node.indexOf('=') + 1).split(":")[0]);
        }
        if (hosts.isEmpty()) {
            for (String e : conf.get(MasterConfig.ENDPOINTS)) hosts.add(e.substring(0, e.lastIndexOf(':')));
        }
        List<String> out = new ArrayList<>();
        for (String h : hosts) if (!out.contains(h + ":" + http)) out.add(h + ":" + http);
        return out;
    }
}
