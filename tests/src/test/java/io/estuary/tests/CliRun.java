package io.estuary.tests;

import io.estuary.cli.EstuaryCli;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** One run of {@code bin/estuary} in this JVM: its exit code and what it printed. */
final class CliRun {
    final int code;
    final String out;
    final String err;

    CliRun(int code, String out, String err) {
        this.code = code;
        this.out = out;
        this.err = err;
    }

    /** Runs the CLI with {@code args}. */
    static CliRun of(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = EstuaryCli.run(args, new PrintStream(out, true), new PrintStream(err, true));
        return new CliRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** As {@link #of}, and prints the command line with its output to the test's log. */
    static CliRun logged(String... args) {
        CliRun r = of(args);
        System.out.println("$ estuary " + String.join(" ", args) + "  (exit " + r.code + ")\n" + r.out + r.err);
        return r;
    }
}
