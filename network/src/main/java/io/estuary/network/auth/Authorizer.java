package io.estuary.network.auth;

import io.estuary.common.config.AuthConfig;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.time.Clock;
import io.estuary.common.util.RateLimitedLog;
import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether the identity a connection proved ({@link Identity#of}) may make a request: one that acts on an
 * application's state, one only servers may make, or one on a fetch stream another identity opened. A refusal is a
 * {@link StatusException}: {@code UNAUTHENTICATED} for a connection that proved nothing, {@code FORBIDDEN} for an
 * identity that may not do this; its message names the server, the request, the identity and the application, never
 * a secret. Each refusal is counted ({@link Refusals}) and logged WARN with the peer's address (rate-limited per
 * request type and status).
 *
 * <p>With authentication off ({@code estuary.auth.enabled=false}) every request is allowed and nothing else is done:
 * a channel without an identity is then a connection of a server that checks nothing, as before authentication
 * existed. With it on, a channel without an identity is anonymous. Thread-safe and immutable (the refusal log is
 * thread-safe).
 */
public final class Authorizer {
    private static final Logger LOG = LoggerFactory.getLogger(Authorizer.class);
    private static final long WARN_INTERVAL_MS = 10_000;

    /** Where refusals are counted (a server's metrics); called on the thread that handles the request. */
    @FunctionalInterface
    public interface Refusals {
        Refusals NONE = (request, status) -> {};

        void refused(String request, StatusCode status);
    }

    private final boolean enabled;
    private final String serverName;
    private final Refusals refusals;
    private final RateLimitedLog warnings;

    public Authorizer(boolean enabled, String serverName, Refusals refusals, Clock clock) {
        this.enabled = enabled;
        this.serverName = serverName;
        this.refusals = refusals;
        this.warnings = new RateLimitedLog(LOG, WARN_INTERVAL_MS, clock);
    }

    /** Authorization as {@code estuary.auth.enabled} says. */
    public static Authorizer of(EstuaryConf conf, String serverName, Refusals refusals) {
        return new Authorizer(conf.get(AuthConfig.ENABLED), serverName, refusals, Clock.system());
    }

    /** Allows everything (authentication off). */
    public static Authorizer off(String serverName) {
        return new Authorizer(false, serverName, Refusals.NONE, Clock.system());
    }

    public boolean enabled() {
        return enabled;
    }

    /**
     * Who the connection is, for authorization: what its handshake proved, {@link Identity#ANONYMOUS} when nothing
     * (or no channel); {@link Identity#UNCHECKED} for every connection when authentication is off.
     */
    public Identity identityOf(Channel channel) {
        if (!enabled) return Identity.UNCHECKED;
        return channel == null ? Identity.ANONYMOUS : Identity.of(channel);
    }

    /** {@code request} acts on application {@code appId}'s state: the application itself or the cluster may. */
    public void checkApplication(Channel channel, String request, String appId) {
        if (!enabled) return;
        Identity who = identityOf(channel);
        if (who.mayActFor(appId)) return;
        refuse(channel, request, who, who + " may not " + request + " for application " + appId);
    }

    /**
     * {@code request} reaches the lifecycle manager of application {@code appId}: only that application's own
     * identity may make it (servers never call a driver).
     */
    public void checkOwnApplication(Channel channel, String request, String appId) {
        if (!enabled) return;
        Identity who = identityOf(channel);
        if (who.equals(Identity.UNCHECKED)
                || (who.isApplication() && who.appId().equals(appId))) return;
        refuse(
                channel,
                request,
                who,
                who + " may not " + request + ": only application " + appId + " may call its own lifecycle manager");
    }

    /** {@code request} changes the cluster's state or carries data between servers: only servers may. */
    public void checkCluster(Channel channel, String request) {
        if (!enabled) return;
        Identity who = identityOf(channel);
        if (who.mayActForCluster()) return;
        refuse(channel, request, who, who + " may not " + request + ": only masters and workers may");
    }

    /**
     * {@code request} uses fetch stream {@code streamId} of application {@code appId}, opened by {@code opener}: a
     * stream belongs to the identity that opened it (servers may use any).
     */
    public void checkStream(Channel channel, String request, long streamId, Identity opener, String appId) {
        if (!enabled) return;
        Identity who = identityOf(channel);
        if (who.equals(opener) || who.mayActForCluster()) return;
        refuse(
                channel,
                request,
                who,
                who + " may not " + request + " on stream " + streamId + " of application " + appId + ": " + opener
                        + " opened it");
    }

    private void refuse(Channel channel, String request, Identity who, String why) {
        StatusCode status = who.isAnonymous() ? StatusCode.UNAUTHENTICATED : StatusCode.FORBIDDEN;
        String message = serverName + " refuses: " + why
                + (who.isAnonymous() ? " (the connection proved no identity: authenticate first)" : "");
        refusals.refused(request, status);
        warnings.warnFor(
                request + "/" + status,
                "Refused " + status + " a request from " + (channel == null ? null : channel.remoteAddress()) + ": "
                        + message);
        throw new StatusException(status, message);
    }
}
