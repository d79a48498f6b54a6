package io.estuary.worker.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.auth.Identity;
import io.estuary.network.buffer.ManagedBuffer;
import io.estuary.testing.ManualClock;
import io.estuary.worker.storage.CommittedFile;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A fetch stream belongs to the identity that opened it: with authentication on, chunk fetches of application A's
 * stream on a connection of application B are refused FORBIDDEN (anonymous: UNAUTHENTICATED), counted, and leave the
 * stream as it was; A on another connection and the cluster may read it; a close from another identity is ignored
 * and counted. With authentication off any connection reads it, as before.
 */
class StreamAuthorizationTest {
    private final List<String> refused = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() {
        for (EmbeddedChannel c : channels) c.finishAndReleaseAll();
    }

    private EmbeddedChannel as(Identity identity) {
        EmbeddedChannel c = new EmbeddedChannel();
        if (identity != null) c.attr(Identity.ATTRIBUTE).set(identity);
        channels.add(c);
        return c;
    }

    private static CommittedFile file() throws Exception {
        File f = Files.createTempFile("part", ".data").toFile();
        f.deleteOnExit();
        Files.write(f.toPath(), new byte[300]);
        return new CommittedFile(f, new long[] {0, 100, 200}, 300, null);
    }

    private StreamRegistry registry(boolean auth) {
        return new StreamRegistry(
                null,
                1000,
                new ManualClock(),
                new Authorizer(auth, "worker-fetch", (r, s) -> refused.add(r + "/" + s), new ManualClock()));
    }

    private static long read(StreamRegistry r, EmbeddedChannel ch, long id, int chunk) {
        ManagedBuffer b = r.getChunkAsync(ch, id, chunk).join();
        long n = b.size();
        b.release();
        return n;
    }

    @Test
    void anotherApplicationCannotReadOrCloseAStream() throws Exception {
        StreamRegistry r = registry(true);
        EmbeddedChannel opener = as(Identity.application("A"));
        long id = r.open(file(), file().allChunks(), opener, "A");
        StatusException e =
                assertThrows(StatusException.class, () -> r.getChunkAsync(as(Identity.application("B")), id, 0));
        assertEquals(StatusCode.FORBIDDEN, e.status(), e.getMessage());
        assertEquals(
                StatusCode.UNAUTHENTICATED,
                assertThrows(StatusException.class, () -> r.getChunkAsync(as(null), id, 2))
                        .status());
        r.closeStream(as(Identity.application("B")), id);
        assertEquals(1, r.openStreams(), "the refused requests left the stream open");
        assertEquals(
                java.util.Arrays.asList(
                        "fetch_chunk/FORBIDDEN", "fetch_chunk/UNAUTHENTICATED", "close_stream/FORBIDDEN"),
                refused);
        assertEquals(100, read(r, opener, id, 0));
        assertEquals(100, read(r, as(Identity.application("A")), id, 1)); // its own identity on another connection
        assertEquals(100, read(r, as(Identity.CLUSTER), id, 2));
        assertEquals(0, r.openStreams());
        assertEquals(3, refused.size());
    }

    @Test
    void withAuthenticationOffAnyConnectionReadsAsBefore() throws Exception {
        StreamRegistry r = registry(false);
        long id = r.open(file(), file().allChunks(), as(null), "A");
        assertEquals(100, read(r, as(Identity.application("B")), id, 0));
        assertEquals(100, read(r, as(null), id, 1));
        assertEquals(0, refused.size());
    }
}
