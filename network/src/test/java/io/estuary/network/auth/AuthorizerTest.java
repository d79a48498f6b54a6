package io.estuary.network.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.testing.ManualClock;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The decisions of {@link Authorizer} for each kind of identity, with authentication on and off. */
class AuthorizerTest {
    private final List<String> refused = new ArrayList<>();
    private final Authorizer on = new Authorizer(
            true, "test server", (request, status) -> refused.add(request + "/" + status), new ManualClock());
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

    private StatusCode refusal(Runnable check) {
        return assertThrows(StatusException.class, check::run).status();
    }

    @Test
    void anApplicationActsForItselfOnlyAndTheClusterForEveryone() {
        on.checkApplication(as(Identity.application("A")), "request_slots", "A");
        on.checkApplication(as(Identity.CLUSTER), "request_slots", "A");
        StatusException e = assertThrows(
                StatusException.class, () -> on.checkApplication(as(Identity.application("B")), "request_slots", "A"));
        assertEquals(StatusCode.FORBIDDEN, e.status());
        assertTrue(e.getMessage().contains("app:B") && e.getMessage().contains("application A"), e.getMessage());
        assertTrue(e.getMessage().contains("test server"), e.getMessage());
        assertEquals(java.util.Arrays.asList("request_slots/FORBIDDEN"), refused);
    }

    @Test
    void aConnectionWithoutAnIdentityIsAnonymousWhenAuthenticationIsOn() {
        StatusException e =
                assertThrows(StatusException.class, () -> on.checkApplication(as(null), "unregister_shuffle", "A"));
        assertEquals(StatusCode.UNAUTHENTICATED, e.status());
        assertTrue(e.getMessage().contains("anonymous"), e.getMessage());
        assertEquals(
                StatusCode.UNAUTHENTICATED,
                refusal(() -> on.checkApplication(as(Identity.ANONYMOUS), "unregister_shuffle", "A")));
        assertEquals(StatusCode.UNAUTHENTICATED, refusal(() -> on.checkApplication(null, "unregister_shuffle", "A")));
        assertEquals(StatusCode.UNAUTHENTICATED, refusal(() -> on.checkCluster(as(null), "worker_heartbeat")));
        assertEquals(
                3,
                refused.stream()
                        .filter("unregister_shuffle/UNAUTHENTICATED"::equals)
                        .count());
    }

    @Test
    void onlyServersMayMakeClusterCalls() {
        on.checkCluster(as(Identity.CLUSTER), "register_worker");
        assertEquals(
                StatusCode.FORBIDDEN, refusal(() -> on.checkCluster(as(Identity.application("A")), "register_worker")));
        assertEquals(java.util.Arrays.asList("register_worker/FORBIDDEN"), refused);
    }

    @Test
    void theLifecyclePortAdmitsItsOwnApplicationOnly() {
        on.checkOwnApplication(as(Identity.application("A")), "mapper_end", "A");
        on.checkOwnApplication(as(Identity.UNCHECKED), "mapper_end", "A");
        assertEquals(
                StatusCode.FORBIDDEN,
                refusal(() -> on.checkOwnApplication(as(Identity.application("B")), "mapper_end", "A")));
        assertEquals(
                StatusCode.FORBIDDEN, refusal(() -> on.checkOwnApplication(as(Identity.CLUSTER), "mapper_end", "A")));
        assertEquals(StatusCode.UNAUTHENTICATED, refusal(() -> on.checkOwnApplication(as(null), "mapper_end", "A")));
    }

    @Test
    void aStreamBelongsToTheIdentityThatOpenedIt() {
        Identity a = Identity.application("A");
        on.checkStream(as(a), "fetch_chunk", 7, a, "A");
        on.checkStream(as(Identity.CLUSTER), "fetch_chunk", 7, a, "A");
        StatusException e = assertThrows(
                StatusException.class, () -> on.checkStream(as(Identity.application("B")), "fetch_chunk", 7, a, "A"));
        assertEquals(StatusCode.FORBIDDEN, e.status());
        assertTrue(e.getMessage().contains("stream 7") && e.getMessage().contains("app:B"), e.getMessage());
        assertEquals(StatusCode.UNAUTHENTICATED, refusal(() -> on.checkStream(as(null), "fetch_chunk", 7, a, "A")));
    }

    @Test
    void withAuthenticationOffEverythingIsAllowedAndNothingCounted() {
        Authorizer off =
                new Authorizer(false, "test server", (request, status) -> refused.add(request), new ManualClock());
        assertFalse(off.enabled());
        EmbeddedChannel anonymous = as(null);
        assertEquals(Identity.UNCHECKED, off.identityOf(anonymous));
        assertEquals(Identity.UNCHECKED, off.identityOf(null));
        off.checkApplication(anonymous, "request_slots", "A");
        off.checkApplication(as(Identity.application("B")), "request_slots", "A");
        off.checkCluster(anonymous, "register_worker");
        off.checkOwnApplication(as(Identity.application("B")), "mapper_end", "A");
        off.checkStream(anonymous, "fetch_chunk", 7, Identity.application("A"), "A");
        assertTrue(refused.isEmpty());
        Authorizer.off("x").checkApplication(null, "request_slots", "A");
    }
}
