package io.estuary.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.estuary.common.config.AuthConfig;
import io.estuary.server.admin.AdminJson;
import io.estuary.server.admin.AdminToken;
import io.estuary.server.admin.AdminViews.MasterStatus;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The masters' admin APIs as the CLI sees them: a list of {@code host:httpPort}, any of which may lead. Reads go to
 * the leader when one answers, else to any master that answers (every master serves reads from its replicated
 * state). Changes go to the leader; when leadership moves meanwhile (421) or an election is under way, the leader
 * is looked up again for a bounded time. Not thread-safe (one command at a time).
 */
final class MasterHttp {
    /** How long changes wait for a leader to be elected. */
    private static final long LEADER_WAIT_MS = 15_000;

    /** One answer: HTTP status and its body (JSON, unless something other than a master answered). */
    record Answer(int code, String body) {
        /** The failure's message: an admin {@code Error}'s text, else the body, else the status. */
        String error() {
            try {
                JsonNode e = body.isEmpty() ? null : AdminJson.tree(body).get("error");
                if (e != null && !e.isNull()) return e.asText();
            } catch (IllegalArgumentException notJson) {
                // fall through: not an admin answer
            }
            return body.trim().isEmpty() ? "HTTP " + code : body.trim();
        }

        <T> T as(Class<T> view) {
            return AdminJson.read(body, view);
        }
    }

    private final List<String> endpoints;
    private final AdminToken token;
    private final String whyNoToken;
    private final AdminTls tls;
    private final HttpClient client;
    private Map<String, MasterStatus> statuses;
    private final Map<String, String> failures = new LinkedHashMap<>(); // why each master last did not answer

    /**
     * {@code token}: sent with every call, or null; {@code whyNoToken}: why there is none (e.g. the configured file
     * cannot be read), said when a master asks for one, or null.
     */
    MasterHttp(List<String> endpoints, AdminToken token, String whyNoToken) {
        this(endpoints, token, whyNoToken, null);
    }

    /** {@code tls}: call the masters over HTTPS with it ({@code estuary.tls.admin.*}), or null for plain HTTP. */
    MasterHttp(List<String> endpoints, AdminToken token, String whyNoToken, AdminTls tls) {
        this.endpoints = endpoints;
        this.token = token;
        this.whyNoToken = whyNoToken;
        this.tls = tls;
        HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3));
        if (tls != null) b.sslContext(tls.context()).sslParameters(tls.parameters());
        this.client = b.build();
    }

    List<String> endpoints() {
        return endpoints;
    }

    static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /**
     * {@code method path} on one master; throws IOException when it does not answer (its message naming a TLS
     * mismatch or a refused certificate when that is why), and CliException when it asks for an admin token (401).
     */
    Answer call(String endpoint, String method, String path) throws IOException, CliException {
        HttpRequest.Builder b = HttpRequest.newBuilder(
                        URI.create((tls != null ? "https://" : "http://") + endpoint + path))
                .timeout(Duration.ofSeconds(30));
        b = method.equals("POST") ? b.POST(HttpRequest.BodyPublishers.noBody()) : b.GET();
        if (token != null) b.header("Authorization", "Bearer " + token.value());
        try {
            HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 401) throw unauthorized(endpoint);
            return new Answer(r.statusCode(), r.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (IllegalArgumentException e) {
            throw new IOException("bad master address '" + endpoint + "': " + e.getMessage(), e);
        } catch (IOException e) {
            String why = SchemeMismatch.explain(endpoint, tls, e);
            failures.put(endpoint, why);
            throw new IOException(why, e);
        }
    }

    /**
     * GET /api/status of every master, by endpoint; null for those that do not answer. Asked once per command (a
     * status lists every worker, which is much with thousands); {@link #freshStatuses()} asks again.
     */
    Map<String, MasterStatus> statuses() throws CliException {
        if (statuses == null) statuses = freshStatuses();
        return statuses;
    }

    /** As {@link #statuses()}, asked now (leadership may have moved). */
    Map<String, MasterStatus> freshStatuses() throws CliException {
        Map<String, MasterStatus> out = new LinkedHashMap<>();
        for (String e : endpoints) {
            MasterStatus s = null;
            try {
                Answer a = call(e, "GET", "/api/status");
                if (a.code() == 200) s = a.as(MasterStatus.class);
            } catch (IOException | IllegalArgumentException ignored) {
                // unreachable, or not a master: reported as unreachable
            }
            out.put(e, s);
        }
        statuses = out;
        return out;
    }

    /** The endpoint of the master that leads (or the single master), or null. */
    static String leader(Map<String, MasterStatus> statuses) {
        for (Map.Entry<String, MasterStatus> e : statuses.entrySet()) {
            MasterStatus s = e.getValue();
            if (s != null && ("leader".equals(s.role()) || "single".equals(s.role()))) return e.getKey();
        }
        return null;
    }

    /** GET {@code path} from the leader, or any master that answers; a 4xx/5xx answer fails the command. */
    <T> T read(String path, Class<T> view) throws CliException {
        Map<String, MasterStatus> st = statuses();
        String leader = leader(st);
        if (leader != null) return ok(leader, "GET", path, view);
        for (Map.Entry<String, MasterStatus> e : st.entrySet()) {
            if (e.getValue() != null) return ok(e.getKey(), "GET", path, view);
        }
        throw unreachable();
    }

    /** POST {@code path} to the leader, following it when it moves. */
    <T> T write(String path, Class<T> view) throws CliException {
        long deadline = System.currentTimeMillis() + LEADER_WAIT_MS;
        String last = null;
        for (boolean first = true; ; first = false) {
            Map<String, MasterStatus> st = first ? statuses() : freshStatuses();
            if (st.values().stream().allMatch(s -> s == null)) throw unreachable();
            String leader = leader(st);
            if (leader != null) {
                try {
                    Answer a = call(leader, "POST", path);
                    if (a.code() / 100 == 2) return parse(a, view);
                    if (a.code() != 421) throw new CliException(CliException.FAILED, a.error());
                    last = a.error();
                } catch (IOException e) {
                    last = "leader " + leader + " did not answer: " + e.getMessage();
                }
            } else {
                last = notAmong(st);
            }
            if (System.currentTimeMillis() > deadline) {
                throw new CliException(
                        CliException.UNREACHABLE,
                        "no leader took the request in " + LEADER_WAIT_MS / 1000 + " s: " + last);
            }
            sleep(300);
        }
    }

    /** Why no leader is among the masters given, e.g. it leads but its HTTP address was not given. */
    private static String notAmong(Map<String, MasterStatus> st) {
        for (MasterStatus s : st.values()) {
            if (s != null && s.leaderId() != null) {
                return "master " + s.leaderId() + " (rpc " + s.leader() + ") leads, but its HTTP address is not "
                        + "among " + st.keySet() + "; add it with --master";
            }
        }
        return "no master leads right now (election under way?)";
    }

    private <T> T ok(String endpoint, String method, String path, Class<T> view) throws CliException {
        try {
            Answer a = call(endpoint, method, path);
            if (a.code() / 100 != 2) throw new CliException(CliException.FAILED, a.error());
            return parse(a, view);
        } catch (IOException e) {
            throw new CliException(
                    CliException.UNREACHABLE, "master " + endpoint + " did not answer: " + e.getMessage());
        }
    }

    /** A master refused the call for want of the right admin token: say how to give it, never the token. */
    private CliException unauthorized(String endpoint) {
        String detail = token != null
                ? " (the token " + token.source() + " was refused)"
                : whyNoToken != null ? " (none found: " + whyNoToken + ")" : "";
        return new CliException(
                CliException.FAILED,
                "the master at " + endpoint + " requires an admin token: pass --token-file or set "
                        + AuthConfig.ADMIN_TOKEN_FILE.key() + detail);
    }

    private CliException unreachable() {
        StringBuilder why = new StringBuilder();
        for (Map.Entry<String, String> f : failures.entrySet()) {
            why.append("\n  ").append(f.getKey()).append(": ").append(f.getValue());
        }
        return new CliException(
                CliException.UNREACHABLE,
                "no master answered at " + String.join(", ", endpoints)
                        + " (give the masters' HTTP addresses with --master host:port[,host:port...])" + why);
    }

    private static void sleep(long ms) throws CliException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(CliException.FAILED, "interrupted");
        }
    }

    private static <T> T parse(Answer a, Class<T> view) throws CliException {
        try {
            return a.as(view);
        } catch (IllegalArgumentException e) {
            throw new CliException(CliException.FAILED, "unexpected answer (HTTP " + a.code() + "): " + e.getMessage());
        }
    }
}
