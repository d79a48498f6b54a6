package io.estuary.network.client;

/**
 * An error the remote side reported (its message, verbatim), or a failure to get an answer at all: no
 * connection, a closed connection, a failed send, no answer in time. Callers that can go elsewhere (e.g. to another
 * master) ask {@link #isConnectionFailure()}; a remote's own error is its answer.
 */
public class RemoteException extends java.io.IOException {
  private final boolean connectionFailure;

  public RemoteException(String message) {
    this(message, null, false);
  }

  public RemoteException(String message, Throwable cause) {
    this(message, cause, false);
  }

  public RemoteException(String message, Throwable cause, boolean connectionFailure) {
    super(message, cause);
    this.connectionFailure = connectionFailure;
  }

  /** No answer came from the remote (as opposed to an answer that is an error); also for wrapped ones. */
  public boolean isConnectionFailure() {
    return connectionFailure || (getCause() instanceof RemoteException
        && ((RemoteException) getCause()).isConnectionFailure());
  }

  static RemoteException noAnswer(String message, Throwable cause) {
    return new RemoteException(message, cause, true);
  }
}
