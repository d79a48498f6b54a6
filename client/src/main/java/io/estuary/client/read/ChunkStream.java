package io.estuary.client.read;

import io.estuary.network.client.ChunkReceivedCallback;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/**
 * Reads the chunks of one opened stream in order from a given chunk on, keeping a few requests ahead of the reader.
 * {@link #close} tells the worker when the stream ends before its last chunk was asked for, so that it does not hold
 * the stream until it idles out. Confined to the reader's thread (chunk callbacks complete futures only).
 */
final class ChunkStream implements AutoCloseable {
    private final TransportClient client;
    private final long streamId;
    private final int numChunks;
    private final int maxInFlight;
    private final CompletableFuture<ByteBuf>[] chunks;
    private int nextToRequest;
    private int nextToRead;
    private int received;
    private boolean foundClosed;

    /** Reads chunks {@code [firstChunk, numChunks)} of the stream. */
    @SuppressWarnings("unchecked")
    ChunkStream(TransportClient client, long streamId, int numChunks, int maxInFlight, int firstChunk) {
        this.client = client;
        this.streamId = streamId;
        this.numChunks = numChunks;
        this.maxInFlight = maxInFlight;
        this.chunks = new CompletableFuture[numChunks];
        this.nextToRequest = firstChunk;
        this.nextToRead = firstChunk;
    }

    /** A stream of one chunk the worker sent with its answer to the open: nothing to ask for, nothing to close. */
    static ChunkStream inline(byte[] data) {
        ChunkStream s = new ChunkStream(null, -1, 1, 1, 0);
        s.chunks[0] = CompletableFuture.completedFuture(io.netty.buffer.Unpooled.wrappedBuffer(data));
        s.nextToRequest = 1;
        return s;
    }

    /** The next chunk (the caller releases it), or null after the last. */
    ByteBuf next() throws RemoteException {
        if (nextToRead >= numChunks) return null;
        while (nextToRequest < numChunks && nextToRequest < nextToRead + maxInFlight) request(nextToRequest++);
        ByteBuf chunk = TransportClient.await(chunks[nextToRead]); // on failure the slot stays, so close() releases it
        chunks[nextToRead++] = null;
        received++;
        return chunk;
    }

    /** The index of the chunk {@link #next} returns (or failed on): every chunk before it was returned. */
    int nextIndex() {
        return nextToRead;
    }

    /** Chunks returned since this stream was opened. */
    int received() {
        return received;
    }

    /**
     * Whether a chunk request found the connection already closed, i.e. closed while this reader asked for nothing
     * (the server's idle close of a reader busy elsewhere for longer than its idle timeout), not broken mid-request.
     */
    boolean foundClosed() {
        return foundClosed;
    }

    private void request(int index) {
        if (!client.isActive()) foundClosed = true;
        CompletableFuture<ByteBuf> f = new CompletableFuture<>();
        chunks[index] = f;
        client.fetchChunk(streamId, index, new ChunkReceivedCallback() {
            @Override
            public void onSuccess(int chunkIndex, ByteBuf chunk) {
                if (!f.complete(chunk)) chunk.release();
            }

            @Override
            public void onFailure(int chunkIndex, Throwable cause) {
                f.completeExceptionally(cause);
            }
        });
    }

    @Override
    public void close() {
        // The worker drops a stream by itself once its last chunk is asked for; before that, it must be told.
        if (nextToRequest < numChunks) client.closeStream(streamId);
        nextToRequest = numChunks;
        for (int i = 0; i < chunks.length; i++) {
            CompletableFuture<ByteBuf> f = chunks[i];
            if (f == null) continue;
            chunks[i] = null;
            // Release chunks that arrive after the reader stopped caring.
            f.thenAccept(ByteBuf::release);
        }
    }
}
