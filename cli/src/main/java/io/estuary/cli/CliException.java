package io.estuary.cli;

/** A failure the CLI reports as one line on stderr, exiting with {@link #exitCode()}. Immutable. */
final class CliException extends Exception {
    /** A master refused the request or something named does not exist. */
    static final int FAILED = 1;
    /** The command line is wrong. */
    static final int USAGE = 2;
    /** No master answered, or none leads. */
    static final int UNREACHABLE = 3;

    private final int exitCode;

    CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
