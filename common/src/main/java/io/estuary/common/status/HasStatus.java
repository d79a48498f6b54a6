package io.estuary.common.status;

/**
 * A failure that carries a {@link StatusCode}: the server's own {@link StatusException}, and the client side's
 * exception for an error a remote reported. {@link #statusOf} reads the code of any failure, so a server can answer
 * with the status of a call it made without depending on the client package that threw it.
 */
public interface HasStatus {
    StatusCode status();

    /** The status a failure carries: its own, the outermost wrapped one's, or {@link StatusCode#FATAL}. */
    static StatusCode statusOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof HasStatus) return ((HasStatus) c).status();
        }
        return StatusCode.FATAL;
    }
}
