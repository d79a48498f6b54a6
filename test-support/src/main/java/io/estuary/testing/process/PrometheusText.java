package io.estuary.testing.process;

/**
 * Reads a metric out of a {@code /metrics} scrape (Prometheus' text exposition format: one {@code name{labels} value}
 * sample a line, {@code #} lines are comments). The harness reads server readiness this way rather than through the
 * JSON admin views: it needs no JSON library on the test's class path. Stateless.
 */
public final class PrometheusText {
    private PrometheusText() {}

    /** The sum of every sample of {@code metric} (over all its label sets), or -1 when the scrape has none. */
    public static double sum(String scrape, String metric) {
        double total = 0;
        boolean found = false;
        for (String line : scrape.split("\n")) {
            line = line.trim();
            if (line.isEmpty() || line.startsWith("#") || !line.startsWith(metric)) continue;
            int end = metric.length();
            if (line.length() == end || (line.charAt(end) != '{' && line.charAt(end) != ' ')) continue;
            int value = line.charAt(end) == '{' ? endOfLabels(line, end) : end;
            String[] rest = line.substring(value).trim().split(" ");
            total += Double.parseDouble(rest[0]);
            found = true;
        }
        return found ? total : -1;
    }

    /** The index after the '}' closing the labels that open at {@code open}; a quoted value may hold a brace. */
    private static int endOfLabels(String line, int open) {
        boolean quoted = false;
        for (int i = open + 1; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '\\') i++;
            else if (c == '"') quoted = !quoted;
            else if (c == '}' && !quoted) return i + 1;
        }
        throw new IllegalArgumentException("unterminated labels in: " + line);
    }
}
