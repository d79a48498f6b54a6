package io.estuary.network.testing;

import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * Embedded channels whose clock stands still until a test moves it ({@code advanceTimeBy}). Netty's embedded clock
 * otherwise runs in real time, so on a loaded machine the time between two steps of a test would count toward a
 * deadline its handlers scheduled when registered. Stateless.
 */
public final class FrozenChannels {
    private FrozenChannels() {}

    /** A registered channel with {@code handlers}, its clock frozen before they could schedule anything. */
    public static EmbeddedChannel of(ChannelHandler... handlers) {
        EmbeddedChannel ch = new EmbeddedChannel(false, false, handlers);
        ch.freezeTime();
        try {
            ch.register();
        } catch (Exception e) {
            throw new AssertionError("cannot register an embedded channel", e);
        }
        return ch;
    }
}
