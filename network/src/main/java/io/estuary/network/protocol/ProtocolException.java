package io.estuary.network.protocol;

/** A frame that breaks the protocol. The connection it came on is closed; other connections are unaffected. */
public class ProtocolException extends RuntimeException {
    public ProtocolException(String message) {
        super(message);
    }
}
