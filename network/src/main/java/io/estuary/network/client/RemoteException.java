package io.estuary.network.client;

/** An error the remote side reported (its message, verbatim) or a failed connection to it. */
public class RemoteException extends java.io.IOException {
  public RemoteException(String message) {
    super(message);
  }

  public RemoteException(String message, Throwable cause) {
    super(message, cause);
  }
}
