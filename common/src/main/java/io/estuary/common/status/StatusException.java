package io.estuary.common.status;

import io.estuary.common.util.EstuaryException;

/** A failure with a {@link StatusCode}: servers throw it, and the code reaches the client with the message. */
public class StatusException extends EstuaryException implements HasStatus {
    private final StatusCode status;

    public StatusException(StatusCode status, String message) {
        super(message);
        this.status = status;
    }

    public StatusException(StatusCode status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    @Override
    public StatusCode status() {
        return status;
    }
}
