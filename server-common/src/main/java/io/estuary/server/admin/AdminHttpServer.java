package io.estuary.server.admin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.estuary.common.util.GuardedThreadPool;
import io.prometheus.client.CollectorRegistry;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * A server's admin HTTP endpoint on a port of its own (the JDK's HTTP server; two threads): routes by method and
 * path, answers unknown paths with 404 listing the known ones, and turns an exception from a route into a 500 with
 * its message as JSON. Masters and workers add their own routes; {@link Builder#metrics} adds the Prometheus
 * text exposition of a registry at {@code GET /metrics}. {@link Builder#auth} decides which calls need the admin
 * token: a call without it (or with another) gets 401 with a JSON error naming what is missing, before any route runs.
 * {@link Builder#https} serves HTTPS instead of HTTP (every route, {@code /metrics} and {@code /health} included).
 * A plain HTTP request to the HTTPS port gets no answer at all: the JDK's server fails the TLS handshake on its first
 * bytes and closes the connection without writing anything, so a plain client sees an empty reply (curl: "Empty reply
 * from server"; Java's HttpClient: "header parser received no bytes"); bin/estuary tells that case apart and says to
 * use HTTPS.
 *
 * <p>Routes run on the server's own threads, one request at a time per thread, and may block briefly.
 */
public final class AdminHttpServer implements Closeable {
    /** Handles one request. */
    public interface Route {
        Response handle(Request request) throws IOException;
    }

    /** What a route sees of a request. */
    public static final class Request {
        private final HttpExchange exchange;

        Request(HttpExchange exchange) {
            this.exchange = exchange;
        }

        public String method() {
            return exchange.getRequestMethod();
        }

        public String path() {
            return exchange.getRequestURI().getPath();
        }

        /** The caller's address, for logs. */
        public String peer() {
            return String.valueOf(exchange.getRemoteAddress());
        }

        /** The value of query parameter {@code name}, percent-decoded, or null. */
        public String query(String name) {
            String q = exchange.getRequestURI().getRawQuery();
            if (q == null) return null;
            for (String kv : q.split("&")) {
                int i = kv.indexOf('=');
                if (i > 0 && kv.substring(0, i).equals(name)) {
                    try {
                        return java.net.URLDecoder.decode(kv.substring(i + 1), "UTF-8");
                    } catch (java.io.UnsupportedEncodingException | IllegalArgumentException e) {
                        return kv.substring(i + 1); // UTF-8 always exists; a malformed escape is taken as it stands
                    }
                }
            }
            return null;
        }
    }

    /** A status code, a content type and a body. Immutable. */
    public static final class Response {
        final int code;
        final String contentType;
        final String body;

        private Response(int code, String contentType, String body) {
            this.code = code;
            this.contentType = contentType;
            this.body = body;
        }

        /** {@code view}: one of {@link AdminViews}. */
        public static Response json(int code, Object view) {
            return new Response(code, "application/json", AdminJson.write(view));
        }

        public static Response error(int code, String message) {
            return json(code, new AdminViews.Error(message));
        }

        public static Response text(int code, String body) {
            return new Response(code, "text/plain; charset=utf-8", body);
        }
    }

    private static final class Entry {
        final String method;
        final String path;
        final boolean prefix;
        final Route route;

        Entry(String method, String path, boolean prefix, Route route) {
            this.method = method;
            this.path = path;
            this.prefix = prefix;
            this.route = route;
        }

        boolean matches(String m, String p) {
            return method.equals(m) && (prefix ? p.startsWith(path) : p.equals(path));
        }

        @Override
        public String toString() {
            return method + " " + path + (prefix ? "..." : "");
        }
    }

    /** Collects routes, then binds. Not thread-safe; use from one thread. */
    public static final class Builder {
        private final String name;
        private final List<Entry> routes = new ArrayList<>();
        private AdminAuth auth = AdminAuth.off();
        private CollectorRegistry registry;
        private SSLContext sslContext;
        private Supplier<SSLParameters> sslParameters;

        private Builder(String name) {
            this.name = name;
        }

        public Builder get(String path, Route route) {
            routes.add(new Entry("GET", path, false, route));
            return this;
        }

        public Builder post(String path, Route route) {
            routes.add(new Entry("POST", path, false, route));
            return this;
        }

        /** A route for every path that starts with {@code prefix}. */
        public Builder postPrefix(String prefix, Route route) {
            routes.add(new Entry("POST", prefix, true, route));
            return this;
        }

        /** Who may call what (default: everyone, authentication off); its refusals are counted in the registry. */
        public Builder auth(AdminAuth auth) {
            this.auth = java.util.Objects.requireNonNull(auth);
            return this;
        }

        /**
         * Serve HTTPS: {@code context} makes each connection's engine (the JDK's server asks it once per connection,
         * so a context that follows renewed files serves them to new connections) and {@code parameters} gives, per
         * connection, the protocols, cipher suites and client-certificate requirement that engine gets.
         */
        public Builder https(SSLContext context, Supplier<SSLParameters> parameters) {
            this.sslContext = java.util.Objects.requireNonNull(context);
            this.sslParameters = java.util.Objects.requireNonNull(parameters);
            return this;
        }

        /** {@code GET /metrics}: the registry in Prometheus' text format. */
        public Builder metrics(CollectorRegistry registry) {
            this.registry = registry;
            return get(
                    "/metrics", r -> new Response(200, PrometheusText.CONTENT_TYPE, PrometheusText.scrape(registry)));
        }

        /** Binds {@code host:port} (0: any free port) and starts serving. */
        public AdminHttpServer start(String host, int port) throws IOException {
            if (registry != null) auth.register(registry);
            return new AdminHttpServer(name, new ArrayList<>(routes), auth, host, port, sslContext, sslParameters);
        }
    }

    /** {@code name} names the threads ({@code <name>-http}). */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    private final HttpServer http;
    private final ExecutorService threads;
    private final List<Entry> routes;
    private final AdminAuth auth;

    private AdminHttpServer(
            String name,
            List<Entry> routes,
            AdminAuth auth,
            String host,
            int port,
            SSLContext sslContext,
            Supplier<SSLParameters> sslParameters)
            throws IOException {
        this.routes = routes;
        this.auth = auth;
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (sslContext == null) {
            this.http = HttpServer.create(address, 64);
        } else {
            HttpsServer https = HttpsServer.create(address, 64);
            https.setHttpsConfigurator(new HttpsConfigurator(sslContext) {
                @Override
                public void configure(HttpsParameters params) { // called for each new connection
                    params.setSSLParameters(sslParameters.get());
                }
            });
            this.http = https;
        }
        this.threads = new GuardedThreadPool(name + "-http", 2);
        http.setExecutor(threads);
        http.createContext("/", ex -> {
            try {
                Response r;
                try {
                    Request request = new Request(ex);
                    AdminAuth.Refusal refused = auth.check(
                            request.method(),
                            request.path(),
                            ex.getRequestHeaders().getFirst("Authorization"),
                            request.peer());
                    r = refused == null
                            ? route(request)
                            : Response.error(401, AdminAuth.message(request.method(), request.path(), refused));
                } catch (RuntimeException e) {
                    r = Response.error(500, String.valueOf(e.getMessage()));
                }
                send(ex, r);
            } finally {
                ex.close();
            }
        });
        http.start();
    }

    private Response route(Request r) throws IOException {
        for (Entry e : routes) if (e.matches(r.method(), r.path())) return e.route.handle(r);
        return Response.error(404, r.method() + " " + r.path() + " is not an admin endpoint; try " + routes);
    }

    private static void send(HttpExchange ex, Response r) throws IOException {
        byte[] b = r.body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", r.contentType);
        if (r.code == 401) ex.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"estuary-admin\"");
        ex.sendResponseHeaders(r.code, b.length == 0 ? -1 : b.length); // -1: no body (0 would mean chunked)
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }

    /** "https" or "http": what this server speaks. */
    public String scheme() {
        return http instanceof HttpsServer ? "https" : "http";
    }

    /** The bound port (the real one when 0 was asked for). */
    public int port() {
        return http.getAddress().getPort();
    }

    @Override
    public void close() {
        http.stop(0);
        threads.shutdownNow();
    }
}
