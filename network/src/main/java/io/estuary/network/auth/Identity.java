package io.estuary.network.auth;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.Objects;

/**
 * Who the peer of a connection proved to be in the connection handshake: the cluster (a master or worker holding the
 * cluster secret), one application (holding that application's secret), or nobody ({@link #ANONYMOUS}: a connection
 * that proved nothing, accepted only where the server lets it in, such as registering a new application, or in the
 * permissive mode of a rolling upgrade). {@link #UNCHECKED} is every connection of a server whose authentication is
 * off, which may do anything, as before authentication existed.
 *
 * <p>Set on the server's channel once, by the handshake, before the first frame is read; request handlers read it with
 * {@link #of} and decide with {@link #mayActFor}. Immutable.
 */
public final class Identity {
    /** How an identity is named in the handshake (the application id follows the prefix). */
    public static final String CLUSTER_NAME = "cluster";

    public static final String APPLICATION_PREFIX = "app:";

    /** A master or worker, proven by the cluster secret: may act for every application and for the cluster. */
    public static final Identity CLUSTER = new Identity(Kind.CLUSTER, null);

    /** Proved nothing. */
    public static final Identity ANONYMOUS = new Identity(Kind.ANONYMOUS, null);

    /** Every connection of a server with authentication off. */
    public static final Identity UNCHECKED = new Identity(Kind.UNCHECKED, null);

    /** The channel attribute the handshake sets. */
    public static final AttributeKey<Identity> ATTRIBUTE = AttributeKey.valueOf("estuary.identity");

    enum Kind {
        CLUSTER,
        APPLICATION,
        ANONYMOUS,
        UNCHECKED
    }

    private final Kind kind;
    private final String appId;

    private Identity(Kind kind, String appId) {
        this.kind = kind;
        this.appId = appId;
    }

    /** An application, proven by its own secret. */
    public static Identity application(String appId) {
        if (appId == null || appId.isEmpty()) throw new IllegalArgumentException("an application id is required");
        return new Identity(Kind.APPLICATION, appId);
    }

    /** The identity a handshake names, {@code "cluster"} or {@code "app:<id>"}; null for any other name. */
    public static Identity parse(String name) {
        if (CLUSTER_NAME.equals(name)) return CLUSTER;
        if (name != null && name.startsWith(APPLICATION_PREFIX) && name.length() > APPLICATION_PREFIX.length()) {
            return application(name.substring(APPLICATION_PREFIX.length()));
        }
        return null;
    }

    /** What the channel's handshake proved; {@link #ANONYMOUS} when nothing was set. */
    public static Identity of(Channel channel) {
        Identity id = channel.attr(ATTRIBUTE).get();
        return id == null ? ANONYMOUS : id;
    }

    /** The name this identity goes by in the handshake and in logs ({@code "cluster"}, {@code "app:<id>"}, ...). */
    public String name() {
        switch (kind) {
            case CLUSTER:
                return CLUSTER_NAME;
            case APPLICATION:
                return APPLICATION_PREFIX + appId;
            case ANONYMOUS:
                return "anonymous";
            default:
                return "unchecked";
        }
    }

    public boolean isCluster() {
        return kind == Kind.CLUSTER;
    }

    public boolean isApplication() {
        return kind == Kind.APPLICATION;
    }

    public boolean isAnonymous() {
        return kind == Kind.ANONYMOUS;
    }

    /** The application proven, or null when this is not an application. */
    public String appId() {
        return appId;
    }

    /** May a request of this identity act on application {@code appId}'s state? */
    public boolean mayActFor(String appId) {
        switch (kind) {
            case CLUSTER:
            case UNCHECKED:
                return true;
            case APPLICATION:
                return this.appId.equals(appId);
            default:
                return false;
        }
    }

    /** May a request of this identity change the cluster's state (report disks, exclude workers, ...)? */
    public boolean mayActForCluster() {
        return kind == Kind.CLUSTER || kind == Kind.UNCHECKED;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Identity)) return false;
        Identity other = (Identity) o;
        return kind == other.kind && Objects.equals(appId, other.appId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, appId);
    }

    @Override
    public String toString() {
        return name();
    }
}
