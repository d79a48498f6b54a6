package io.estuary.worker.push;

import io.estuary.common.time.Clock;
import io.estuary.common.util.RateLimitedLog;
import io.estuary.network.server.TransportServer;
import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warns, once per stall (and at most one line per 10 s for all connections), about a push connection that has completed no frame for {@link #STALL_NANOS} while it holds
 * part of a frame or owes answers: a map task is then waiting for acknowledgements that will come only after its
 * push timeout. The warning names what the connection's decoder received, decoded and holds (the held frame's
 * declared length and first bytes), the answers it owes and whether it is read, which tells a peer that stopped
 * mid-frame, a stream that lost its framing and a request the worker never answered apart.
 *
 * <p>One per connection, confined to the connection's event loop: {@link #received} is called by the frame decoder
 * after each read, the check runs on a timer of the same loop, and {@link #stop} cancels it when the connection goes.
 */
final class StalledPushWatch {
    private static final Logger LOG = LoggerFactory.getLogger(StalledPushWatch.class);
    /** One line per 10 s for all connections: a long pause stalls every connection of a busy worker at once. */
    private static final RateLimitedLog WARNINGS = new RateLimitedLog(LOG, 10_000, Clock.system());

    static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long CHECK_SECONDS = 10;

    private final Channel channel;
    private final String serverName;
    private final Clock clock;
    /** Null when the caller runs {@link #check} itself (tests). */
    private final ScheduledFuture<?> timer;

    private long lastProgress;
    private long held;
    private boolean warned;
    /** Whether this stall's warning was logged (not left out by the rate limit). */
    private boolean logged;

    StalledPushWatch(Channel channel, String serverName, Clock clock, boolean scheduled) {
        this.channel = channel;
        this.serverName = serverName;
        this.clock = clock;
        this.lastProgress = clock.nanos();
        this.timer = scheduled
                ? channel.eventLoop()
                        .scheduleWithFixedDelay(this::check, CHECK_SECONDS, CHECK_SECONDS, TimeUnit.SECONDS)
                : null;
    }

    /** Watches {@code channel} on a timer of its event loop. */
    static StalledPushWatch start(Channel channel, String serverName) {
        return new StalledPushWatch(channel, serverName, Clock.system(), true);
    }

    /** After each read: a completed frame, or a change in what is held, is progress. */
    void received(long heldNow, int framesCompleted) {
        if (framesCompleted > 0 || heldNow != held) {
            lastProgress = clock.nanos();
            if (warned && logged) {
                LOG.info("{}: push connection from {} moves again", serverName, channel.remoteAddress());
            }
            warned = false;
        }
        held = heldNow;
    }

    void stop() {
        if (timer != null) timer.cancel(false);
    }

    /** Warns if the connection stalled since its last progress and was not warned of yet; returns whether it did. */
    boolean check() {
        if (warned || !channel.isActive()) return false;
        long still = clock.nanos() - lastProgress;
        if (still < STALL_NANOS) return false;
        int owed = TransportServer.unansweredRequests(channel);
        if (held == 0 && owed == 0) return false; // quiet, and owing nothing: an idle connection
        warned = true;
        logged = WARNINGS.warn(
                "{}: push connection from {} has completed no frame for {} s: {}",
                serverName,
                channel.remoteAddress(),
                TimeUnit.NANOSECONDS.toSeconds(still),
                TransportServer.describeConnection(channel));
        return true;
    }
}
