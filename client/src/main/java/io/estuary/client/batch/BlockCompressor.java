package io.estuary.client.batch;

import io.netty.buffer.ByteBuf;

/**
 * One compression algorithm over whole blocks (a batch's records), both ways. An instance keeps scratch buffers and
 * is confined to one thread, like the {@link BatchCodec} that owns it. Decompressing untrusted bytes must fail with
 * {@link CorruptBatchException}, never read or write outside the given buffers.
 */
interface BlockCompressor {
    /** The most bytes {@link #compress} can produce from {@code length} input bytes. */
    int maxCompressedLength(int length);

    /**
     * Compresses {@code raw[offset, offset + length)} into {@code out} at {@code at}, where {@code room} bytes are
     * writable; returns the compressed length.
     */
    int compress(byte[] raw, int offset, int length, ByteBuf out, int at, int room);

    /**
     * Decompresses the {@code dataLength} bytes at {@code offset} of {@code data}, which must come out as exactly
     * {@code rawLength} bytes; the result is valid until the next call. {@code where} names the batch in errors.
     */
    ByteBuf decompress(ByteBuf data, int offset, int dataLength, int rawLength, String where);
}
