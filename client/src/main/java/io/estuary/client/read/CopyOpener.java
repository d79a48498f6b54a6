package io.estuary.client.read;

import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.config.ClientConfig;
import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.rpc.ControlClient;
import java.util.concurrent.CompletableFuture;

/**
 * Opens the stream of one copy of an epoch on its worker, limited to the maps the reader reads, and goes on from the
 * chunk where an earlier read of the copy stopped when the worker serves the same stream again. A small copy comes
 * back whole with the answer ({@code estuary.client.fetch.inlineMaxBytes}): no chunk is asked for. Thread-safe; the
 * copy it is given is confined to its reader's thread.
 */
final class CopyOpener {
    private final ReaderPort client;
    private final ShuffleSpec spec;
    private final int startMap;
    private final int endMap;
    private final int maxChunksInFlight;
    private final int inlineMaxBytes;

    CopyOpener(ReaderPort client, ShuffleSpec spec, int startMap, int endMap) {
        this.client = client;
        this.spec = spec;
        this.startMap = startMap;
        this.endMap = endMap;
        this.maxChunksInFlight = client.conf().get(ClientConfig.FETCH_MAX_CHUNKS_IN_FLIGHT);
        this.inlineMaxBytes =
                client.conf().get(ClientConfig.FETCH_INLINE_MAX_BYTES).intValue();
    }

    /** How logs and errors name the stream of a copy. */
    String describe(PartitionLocation loc) {
        return "partition " + loc.getPartitionId() + " epoch " + loc.getEpoch() + " (" + loc.getRole() + ") of " + spec
                + " on " + loc.getWorker().getHost() + ":" + loc.getWorker().getFetchPort();
    }

    /**
     * An open sent ahead of its turn ({@link #openAhead}): the copy, the connection it went on, the answer to come.
     * Confined to its reader's thread (the answer completes on a network thread); an inline answer holds heap bytes
     * only, and a stream it opened is closed by whoever lets it go ({@link #discard}, or {@link #open} in turn).
     */
    static final class Ahead {
        final EpochRead.CopyRead copy;
        final TransportClient connection;
        final CompletableFuture<StreamHandle> answer;

        Ahead(EpochRead.CopyRead copy, TransportClient connection, CompletableFuture<StreamHandle> answer) {
            this.copy = copy;
            this.connection = connection;
            this.answer = answer;
        }

        /**
         * Lets the answer go unread: a stream it opened (a worker that does not answer inline) is closed on its
         * worker when it comes.
         */
        void discard() {
            answer.thenAccept(h -> {
                if (h.getStreamId() >= 0 && h.getInlineData().isEmpty()) connection.closeStream(h.getStreamId());
            });
        }
    }

    /** Whether a copy of {@code bytes} comes back with its open (so opening it ahead holds nothing on its worker). */
    boolean inline(long bytes) {
        return bytes <= inlineMaxBytes;
    }

    private OpenStreamRequest.Builder request(int shuffleId, PartitionLocation loc) {
        OpenStreamRequest.Builder open = OpenStreamRequest.newBuilder()
                .setAppId(spec.appId)
                .setShuffleId(shuffleId)
                .setPartitionId(loc.getPartitionId())
                .setEpoch(loc.getEpoch())
                .setInlineMaxBytes(inlineMaxBytes);
        if (startMap > 0 || endMap < spec.numMappers) {
            // Only these maps: the worker serves the parts of the file that may hold them (batches of other maps
            // that come along are skipped by the reader, as they are from a worker that serves the whole file).
            open.setStartMap(startMap).setEndMap(Math.max(startMap + 1, Math.min(endMap, spec.numMappers)));
        }
        return open;
    }

    /**
     * Sends the open of {@code copy} now, for {@link #open} to take when its turn comes; null when it cannot be sent
     * (no connection): the open in turn then meets the failure and counts it, as for any copy.
     */
    Ahead openAhead(int shuffleId, EpochRead.CopyRead copy) {
        try {
            TransportClient c = client.fetchClient(spec.appId, copy.location.getWorker());
            return new Ahead(
                    copy,
                    c,
                    ControlClient.askAsync(
                            c,
                            Request.newBuilder().setOpenStream(request(shuffleId, copy.location)),
                            StreamHandle.parser()));
        } catch (RemoteException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Opens {@code copy} of the generation {@code shuffleId} (the Estuary shuffle id); {@code name} is its
     * {@link #describe description}; {@code ahead}, when it is this copy's, is its open sent earlier (else it is let
     * go). Returns its stream from the chunk to read next, or null when the copy has nothing left to read (an empty
     * file).
     */
    ChunkStream open(int shuffleId, EpochRead.CopyRead copy, String name, Ahead ahead) throws RemoteException {
        StreamHandle h = null;
        TransportClient c = null;
        try {
            if (ahead != null && ahead.copy == copy) {
                c = ahead.connection;
                h = TransportClient.await(ahead.answer);
                if (h.getInlineData().isEmpty() && h.getStreamId() >= 0) {
                    // A stream after all (a worker that answers no open inline): it may have idled out on its worker
                    // while the reader was busy elsewhere, so it is opened again now, in turn.
                    c.closeStream(h.getStreamId());
                    h = null;
                }
            } else if (ahead != null) {
                ahead.discard();
            }
            if (h == null) {
                c = client.fetchClient(spec.appId, copy.location.getWorker());
                h = ControlClient.ask(
                        c,
                        Request.newBuilder().setOpenStream(request(shuffleId, copy.location)),
                        StreamHandle.parser());
            }
        } catch (RemoteException e) {
            throw new RemoteException("cannot open " + name + ": " + e.getMessage(), e);
        }
        if (h.getNumChunks() != copy.numChunks || h.getTotalBytes() != copy.totalBytes) {
            copy.resumeChunk = 0; // not the stream read before: read it all (what was returned already is skipped)
        }
        copy.numChunks = h.getNumChunks();
        copy.totalBytes = h.getTotalBytes();
        if (h.getNumChunks() <= copy.resumeChunk) return null;
        if (!h.getInlineData().isEmpty())
            return ChunkStream.inline(h.getInlineData().toByteArray());
        return new ChunkStream(c, h.getStreamId(), h.getNumChunks(), maxChunksInFlight, copy.resumeChunk);
    }
}
