package io.estuary.common.status;

/**
 * What went wrong with a request, as one byte on the wire. Clients switch on the code, never on message text; the
 * message is for people. Each constant says what a client does when it gets it. {@link #isRetryable()} is the one
 * place that decides whether trying again can help.
 */
public enum StatusCode {
    /** Success. On a push acknowledgement: nothing to do. */
    OK(0, false),
    /** The server is busy (memory over its limit): back off with jitter and send the same request again. */
    RETRY_LATER(1, true),
    /** Push acknowledged, and the partition file passed its soft split size: ask for the next epoch in the background. */
    SOFT_SPLIT(2, true),
    /** The partition file is at its hard split size and took nothing: revive the partition and push there. */
    HARD_SPLIT(3, true),
    /** The stage ended (the location is committed): the pushing attempt lost the race; its data is not needed. */
    STAGE_ENDED(4, false),
    /** The worker does not hold this location (it restarted, or the shuffle expired): revive the partition. */
    UNKNOWN_LOCATION(5, true),
    /** The disk holding the location failed: revive the partition (writes) or read the other copy (reads). */
    DISK_FAILED(6, true),
    /** The primary could not forward the data to its replica: revive the partition. */
    REPLICATE_FAILED(7, true),
    /** This master does not lead; the message names the leader's endpoint, or is empty while none is known. */
    NOT_LEADER(8, true),
    /** The request named an application or shuffle the server does not know. */
    UNKNOWN_SHUFFLE(9, false),
    /** A partition cannot be read from any copy: the engine reruns the stage that wrote it. */
    SHUFFLE_DATA_LOST(10, false),
    /** The request is malformed or asks for something impossible: fail at once. */
    BAD_REQUEST(11, false),
    /** No answer: the connection failed, closed or timed out. Set by the client, never sent. */
    CONNECTION_FAILED(12, true),
    /** Anything else that will not get better by trying again: fail at once with the message. */
    FATAL(13, false),
    /**
     * Push acknowledged, but the application (or its user) pushes faster than its share of the worker: wait a
     * little before the next pushes, longer while it lasts.
     */
    CONGESTED(14, true),
    /**
     * Client and server speak different protocol versions, found by the handshake at connect, before any request:
     * fail at once; the message names both versions. Also when one side speaks TLS and the other does not (the
     * message says which). Set by the client, never sent.
     */
    VERSION_MISMATCH(15, false),
    /**
     * A chunk of a stream the worker does not hold (any more): it was dropped after idling
     * ({@code estuary.worker.fetch.streamTimeout}), closed, or the worker restarted. Nothing is lost: open the same
     * copy again and go on from that chunk.
     */
    UNKNOWN_STREAM(16, true),
    /**
     * The writer belongs to an older attempt of its stage than the one writing the shuffle's newest generation: a
     * straggler of a stage that was rerun, whose output the engine ignores. Fail this task only (its task set is a
     * zombie, so the engine counts the failure against nothing); never retry.
     */
    STALE_ATTEMPT(17, false),
    /**
     * The connection did not prove who it is (no credentials, a wrong secret, an application the server does not
     * know) where the server requires it, or a TLS certificate was refused (the server's untrusted, expired or naming
     * another host; the client's missing or untrusted under mutual TLS): fail at once, the message says what was
     * missing. Never retried: a new
     * attempt with the same credentials fails the same way.
     */
    UNAUTHENTICATED(18, false),
    /**
     * The connection proved who it is, but that identity may not do this: another application's shuffle, or a call
     * only servers may make. Fail at once; never retried.
     */
    FORBIDDEN(19, false),
    /**
     * The application's user, its tenant or the whole cluster is over a quota (the message names the quota, its limit
     * and what is in use): the shuffle is refused, or was stopped while running. Fail the job with the message; never
     * retried, and never a silent fall-back to the engine's own shuffle. Older clients read it as {@link #FATAL}.
     */
    QUOTA_EXCEEDED(20, false),
    /**
     * Over a quota whose policy is to wait for room: ask again after a pause, saying how long the shuffle has waited;
     * the master answers {@link #QUOTA_EXCEEDED} once the quota's wait is over.
     */
    ADMISSION_WAIT(21, true);

    private static final StatusCode[] BY_ID = new StatusCode[32];

    static {
        for (StatusCode c : values()) BY_ID[c.id] = c;
    }

    private final byte id;
    private final boolean retryable;

    StatusCode(int id, boolean retryable) {
        this.id = (byte) id;
        this.retryable = retryable;
    }

    public byte id() {
        return id;
    }

    /** Whether the same work may succeed if tried again (possibly elsewhere, after a revive). */
    public boolean isRetryable() {
        return retryable;
    }

    /** True for codes after which a writer must move the partition to a new location. */
    public boolean needsRevive() {
        return this == HARD_SPLIT
                || this == UNKNOWN_LOCATION
                || this == DISK_FAILED
                || this == REPLICATE_FAILED
                || this == CONNECTION_FAILED;
    }

    /** The code for a byte from the wire; unknown bytes (a newer peer) read as {@link #FATAL}. */
    public static StatusCode of(byte id) {
        StatusCode c = id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
        return c == null ? FATAL : c;
    }
}
