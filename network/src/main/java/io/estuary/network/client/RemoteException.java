package io.estuary.network.client;

import io.estuary.common.status.HasStatus;
import io.estuary.common.status.StatusCode;

/**
 * An error the remote side reported (its status code and message), or a failure to get an answer at all (no
 * connection, a closed connection, a failed send, no answer in time: {@link StatusCode#CONNECTION_FAILED}).
 * Callers decide what to do from {@link #status()}, never from the message. Wrapping keeps the cause's status.
 */
public class RemoteException extends java.io.IOException implements HasStatus {
    private final StatusCode status;

    public RemoteException(String message) {
        this(StatusCode.FATAL, message, null);
    }

    /** Wraps a cause, keeping its status when it has one. */
    public RemoteException(String message, Throwable cause) {
        this(statusOf(cause), message, cause);
    }

    public RemoteException(StatusCode status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    @Override
    public StatusCode status() {
        return status;
    }

    /** No answer came from the remote (as opposed to an answer that is an error); also for wrapped ones. */
    public boolean isConnectionFailure() {
        return status == StatusCode.CONNECTION_FAILED;
    }

    /** The status a failure carries: its own, a wrapped one's, or {@link StatusCode#FATAL}. */
    public static StatusCode statusOf(Throwable t) {
        return HasStatus.statusOf(t);
    }

    static RemoteException noAnswer(String message, Throwable cause) {
        return new RemoteException(StatusCode.CONNECTION_FAILED, message, cause);
    }
}
