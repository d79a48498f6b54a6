package io.estuary.common.util;

/** A failure Estuary reports to its caller with a message that says what went wrong and where. */
public class EstuaryException extends RuntimeException {
    public EstuaryException(String message) {
        super(message);
    }

    public EstuaryException(String message, Throwable cause) {
        super(message, cause);
    }
}
