package io.estuary.worker.admin;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/** Test helpers: GETs against an admin endpoint on loopback, Prometheus text parsed into values, bounded waits. */
final class Scrapes {
    private Scrapes() {}

    /** A status code and a body. */
    static final class Reply {
        final int code;
        final String body;

        Reply(int code, String body) {
            this.code = code;
            this.body = body;
        }

        @Override
        public String toString() {
            return code + " " + body;
        }
    }

    static Reply get(int port, String path) throws IOException {
        return request("GET", port, path);
    }

    static Reply post(int port, String path) throws IOException {
        return request("POST", port, path);
    }

    private static Reply request(String method, int port, String path) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
        c.setRequestMethod(method);
        c.setConnectTimeout(10_000);
        c.setReadTimeout(30_000);
        // MiniCluster's servers authenticate with the shared cluster secret: admin calls carry its token.
        java.nio.file.Path secret = io.estuary.testing.ClusterSecrets.sharedIfMade();
        if (secret != null) {
            c.setRequestProperty("Authorization", "Bearer " + io.estuary.testing.ClusterSecrets.adminToken(secret));
        }
        int code = c.getResponseCode();
        try (InputStream in = code < 400 ? c.getInputStream() : c.getErrorStream()) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            if (in != null) {
                byte[] b = new byte[8192];
                for (int n; (n = in.read(b)) > 0; ) out.write(b, 0, n);
            }
            return new Reply(code, new String(out.toByteArray(), StandardCharsets.UTF_8));
        } finally {
            c.disconnect();
        }
    }

    /** {@link #get}, failing the calling test on an I/O error: for use inside wait conditions. */
    static Reply getOrFail(int port, String path) {
        try {
            return get(port, path);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Samples of a text exposition by series: {@code name} or {@code name{a="x",b="y"}} with the labels in the order
     * printed and without the exporter's trailing comma.
     */
    static Map<String, Double> samples(String exposition) {
        Map<String, Double> out = new HashMap<>();
        for (String line : exposition.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) continue;
            int space = line.lastIndexOf(' ');
            out.put(line.substring(0, space).replace(",}", "}"), Double.parseDouble(line.substring(space + 1)));
        }
        return out;
    }

    static double sample(Map<String, Double> samples, String series) {
        Double v = samples.get(series);
        if (v == null) throw new AssertionError("no series " + series + " in " + samples.keySet());
        return v;
    }
}
