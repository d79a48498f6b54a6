package io.estuary.network.protocol;

import io.estuary.common.config.NetworkConfig;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/** Strings inside frame headers: an int byte count, then UTF-8. */
final class Codec {
    private Codec() {}

    static int stringLength(String s) {
        return 4 + s.getBytes(StandardCharsets.UTF_8).length;
    }

    static void writeString(ByteBuf out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.writeBytes(b);
    }

    static String readString(ByteBuf in, MessageType type) {
        return readString(in, type, Integer.MAX_VALUE);
    }

    /** Reads a string of at most {@code maxBytes}; a longer one is refused, naming the limit's configuration key. */
    static String readString(ByteBuf in, MessageType type, int maxBytes) {
        need(in, 4, type);
        int len = in.readInt();
        if (len > maxBytes && len <= in.readableBytes()) {
            throw new ProtocolException(type + " header carries a string of " + len + " bytes, more than "
                    + NetworkConfig.MAX_STRING_BYTES.key() + " (" + maxBytes + ") allows");
        }
        if (len < 0 || len > in.readableBytes()) {
            throw new ProtocolException("malformed " + type + " frame: a string of " + len
                    + " bytes does not fit in the " + in.readableBytes() + " bytes left");
        }
        String s = in.toString(in.readerIndex(), len, StandardCharsets.UTF_8);
        in.skipBytes(len);
        return s;
    }

    /** Flag bit of a push header: the push was forwarded by the primary's worker to the replica. */
    static final int FLAG_FORWARDED = 1;

    /** Reads a push header's flags byte; bits this version does not know are a malformed frame, not ignored. */
    static boolean readPushFlags(ByteBuf in, MessageType type) {
        byte flags = in.readByte();
        if ((flags & ~FLAG_FORWARDED) != 0) {
            throw new ProtocolException(String.format("malformed %s frame: unknown flags 0x%02x", type, flags & 0xff));
        }
        return (flags & FLAG_FORWARDED) != 0;
    }

    /** Fails with a precise message when a header is cut short. */
    static void need(ByteBuf in, int bytes, MessageType type) {
        if (in.readableBytes() < bytes) {
            throw new ProtocolException("truncated " + type + " frame: header needs " + bytes + " more bytes, "
                    + in.readableBytes() + " left");
        }
    }
}
