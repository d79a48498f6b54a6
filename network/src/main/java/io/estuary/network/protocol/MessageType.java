package io.estuary.network.protocol;

/** The type byte that follows the length of every frame. */
public enum MessageType {
    RPC_REQUEST(1),
    RPC_RESPONSE(2),
    RPC_FAILURE(3),
    ONE_WAY(4),
    PUSH_DATA(5),
    PUSH_MERGED_DATA(6),
    CHUNK_FETCH_REQUEST(7),
    CHUNK_FETCH_SUCCESS(8),
    CHUNK_FETCH_FAILURE(9),
    STREAM_CLOSE(10);

    private static final MessageType[] BY_ID = new MessageType[16];

    static {
        for (MessageType t : values()) BY_ID[t.id] = t;
    }

    private final byte id;

    MessageType(int id) {
        this.id = (byte) id;
    }

    public byte id() {
        return id;
    }

    /** Null for a byte that names no type. */
    public static MessageType fromId(byte id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }
}
