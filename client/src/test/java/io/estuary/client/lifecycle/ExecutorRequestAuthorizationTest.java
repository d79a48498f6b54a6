package io.estuary.client.lifecycle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.ProtocolVersion;
import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.protocol.GetReducerFileGroupRequest;
import io.estuary.common.protocol.MapperEndRequest;
import io.estuary.common.protocol.MapperEndResponse;
import io.estuary.common.protocol.RegisterShuffleRequest;
import io.estuary.common.protocol.ReportFetchFailureRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.ReviveRequest;
import io.estuary.common.status.StatusCode;
import io.estuary.network.auth.Authorizer;
import io.estuary.network.auth.Identity;
import io.estuary.network.server.ResponseCallback;
import io.estuary.testing.ManualClock;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The driver's lifecycle port admits only its own application: the forged "map ended" of issue 17 (an unused attempt
 * id, no counts), sent anonymously or as another application, is refused and leaves the shuffle as it was, so the
 * real attempt still wins. Every request type of the port is refused the same way; with authentication off every
 * request is served as before.
 */
class ExecutorRequestAuthorizationTest {
    private static final String APP = "A";

    private final ShuffleGenerations generations = new ShuffleGenerations();
    private final AtomicInteger driverCalls = new AtomicInteger();
    private final List<String> refused = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    private final ExecutorRequestHandler.Driver driver = new ExecutorRequestHandler.Driver() {
        @Override
        public CompletableFuture<EpochTable> register(ShuffleState s) {
            driverCalls.incrementAndGet();
            return new CompletableFuture<>(); // never answers: these tests look at authorization only
        }

        @Override
        public void commit(ShuffleState s) {
            driverCalls.incrementAndGet();
        }

        @Override
        public void lost(ShuffleState s) {
            driverCalls.incrementAndGet();
        }
    };

    @AfterEach
    void close() {
        for (EmbeddedChannel c : channels) c.finishAndReleaseAll();
    }

    private ExecutorRequestHandler handler(boolean authEnabled) {
        EstuaryConf conf = new EstuaryConf().set(AuthConfig.ENABLED, String.valueOf(authEnabled));
        return new ExecutorRequestHandler(
                APP,
                conf,
                generations,
                null,
                driver,
                new Authorizer(authEnabled, "lifecycle", (r, s) -> refused.add(r + "/" + s), new ManualClock()));
    }

    private EmbeddedChannel as(Identity identity) {
        EmbeddedChannel c = new EmbeddedChannel();
        if (identity != null) c.attr(Identity.ATTRIBUTE).set(identity);
        channels.add(c);
        return c;
    }

    /** What the handler answered: the status and, on success, the body's bytes. */
    private static final class Answer implements ResponseCallback {
        StatusCode status;
        String error;
        byte[] body;

        @Override
        public void onSuccess(ByteBuf b) {
            body = new byte[b.readableBytes()];
            b.readBytes(body);
            b.release();
            status = StatusCode.OK;
        }

        @Override
        public void onFailure(StatusCode s, String e) {
            status = s;
            error = e;
        }
    }

    private static Answer ask(ExecutorRequestHandler h, EmbeddedChannel channel, Request.Builder request) {
        Answer a = new Answer();
        ByteBuf body = Unpooled.wrappedBuffer(
                request.setProtocolVersion(ProtocolVersion.CURRENT).build().toByteArray());
        try {
            h.receive(channel, body, a);
        } finally {
            body.release();
        }
        return a;
    }

    private static Request.Builder mapperEnd(int shuffleId, int mapId, int attemptId) {
        return Request.newBuilder()
                .setMapperEnd(MapperEndRequest.newBuilder()
                        .setShuffleId(shuffleId)
                        .setMapId(mapId)
                        .setAttemptId(attemptId));
    }

    /** One request of every type the lifecycle port serves, each naming shuffle generation {@code s}. */
    private static List<Request.Builder> everyRequest(ShuffleState s) {
        return java.util.Arrays.asList(
                Request.newBuilder()
                        .setRegisterShuffle(RegisterShuffleRequest.newBuilder()
                                .setShuffleId(s.engineShuffleId)
                                .setNumMappers(2)
                                .setNumPartitions(2)),
                mapperEnd(s.shuffleId, 1, 99),
                Request.newBuilder()
                        .setGetReducerFileGroup(GetReducerFileGroupRequest.newBuilder()
                                .setShuffleId(s.engineShuffleId)
                                .setStartPartition(0)
                                .setEndPartition(2)),
                Request.newBuilder().setRevive(ReviveRequest.newBuilder().setShuffleId(s.shuffleId)),
                Request.newBuilder()
                        .setReportFetchFailure(ReportFetchFailureRequest.newBuilder()
                                .setEstuaryShuffleId(s.shuffleId)
                                .setShuffleId(s.engineShuffleId)
                                .setReason("forged")));
    }

    @Test
    void aForgedMapEndIsRefusedAndChangesNothing() {
        ExecutorRequestHandler h = handler(true);
        ShuffleState s = generations.forWriter(3, 1, 0, false, 2, 2);
        Answer anonymous = ask(h, as(null), mapperEnd(s.shuffleId, 1, 99));
        assertEquals(StatusCode.UNAUTHENTICATED, anonymous.status, anonymous.error);
        Answer other = ask(h, as(Identity.application("B")), mapperEnd(s.shuffleId, 1, 99));
        assertEquals(StatusCode.FORBIDDEN, other.status, other.error);
        assertTrue(other.error.contains("app:B") && other.error.contains(APP), other.error);
        Answer cluster = ask(h, as(Identity.CLUSTER), mapperEnd(s.shuffleId, 1, 99));
        assertEquals(StatusCode.FORBIDDEN, cluster.status, cluster.error);
        assertArrayEquals(new int[] {-1, -1}, s.mapAttemptsCopy(), "a refused map end records nothing");
        assertFalse(s.commitStarted());
        assertEquals(
                java.util.Arrays.asList("mapper_end/UNAUTHENTICATED", "mapper_end/FORBIDDEN", "mapper_end/FORBIDDEN"),
                refused);

        // The real attempts end their maps afterwards and win.
        EmbeddedChannel owner = as(Identity.application(APP));
        assertEquals(StatusCode.OK, ask(h, owner, mapperEnd(s.shuffleId, 0, 0)).status);
        Answer real = ask(h, owner, mapperEnd(s.shuffleId, 1, 4));
        assertEquals(StatusCode.OK, real.status, real.error);
        assertEquals(4, parseWinner(real));
        assertArrayEquals(new int[] {0, 4}, s.mapAttemptsCopy());
        assertEquals(1, driverCalls.get(), "the commit starts once, after the real ends");
    }

    @Test
    void everyRequestOfAnotherApplicationOrAnAnonymousPeerIsRefused() {
        ExecutorRequestHandler h = handler(true);
        ShuffleState s = generations.forWriter(3, 1, 0, false, 2, 2);
        for (Request.Builder r : everyRequest(s)) {
            String type = r.getPayloadCase().toString();
            Answer b = ask(h, as(Identity.application("B")), r.clone());
            assertEquals(StatusCode.FORBIDDEN, b.status, type + ": " + b.error);
            Answer anonymous = ask(h, as(Identity.ANONYMOUS), r.clone());
            assertEquals(StatusCode.UNAUTHENTICATED, anonymous.status, type + ": " + anonymous.error);
        }
        assertEquals(0, driverCalls.get());
        assertFalse(s.lost(), "a refused fetch failure report loses nothing");
        assertArrayEquals(new int[] {-1, -1}, s.mapAttemptsCopy());
        assertEquals(10, refused.size());
        // Its own application gets past authorization with every request (each then answered on its merits).
        for (Request.Builder r : everyRequest(s)) {
            Answer a = ask(h, as(Identity.application(APP)), r.clone());
            assertNotEquals(StatusCode.FORBIDDEN, a.status, a.error);
            assertNotEquals(StatusCode.UNAUTHENTICATED, a.status, a.error);
        }
        assertEquals(10, refused.size());
    }

    @Test
    void withAuthenticationOffAnyPeerIsServedAsBefore() {
        ExecutorRequestHandler h = handler(false);
        ShuffleState s = generations.forWriter(3, 1, 0, false, 2, 2);
        Answer a = ask(h, as(null), mapperEnd(s.shuffleId, 1, 99));
        assertEquals(StatusCode.OK, a.status, a.error);
        assertArrayEquals(new int[] {-1, 99}, s.mapAttemptsCopy());
        assertTrue(refused.isEmpty());
    }

    private static int parseWinner(Answer a) {
        try {
            return MapperEndResponse.parseFrom(a.body).getWinningAttemptId();
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }
}
