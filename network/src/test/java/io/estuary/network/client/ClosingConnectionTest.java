package io.estuary.network.client;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.status.StatusCode;
import io.estuary.network.protocol.RpcFailure;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * A server that closes an idle connection says so first: from that notice on, the client is no longer active, so a
 * pool opens a new connection instead of handing out one whose requests would all fail (found by FetchStreamsTest on
 * a loaded machine: a map's end was refused "closed the connection after 200 ms without traffic").
 */
class ClosingConnectionTest {
    @Test
    void aConnectionTheServerAnnouncedClosingIsNoLongerActive() {
        ResponseHandler handler = new ResponseHandler("server:1");
        EmbeddedChannel channel = new EmbeddedChannel(handler);
        TransportClient client = new TransportClient(channel, handler, 1_000, "server:1", 1);
        assertTrue(client.isActive());
        channel.writeInbound(new RpcFailure(
                RpcFailure.CONNECTION_ERROR,
                StatusCode.RETRY_LATER,
                "idler closed the connection after 200 ms without traffic (estuary.network.server.idleTimeout)"));
        assertTrue(channel.isActive(), "the server's close has not arrived yet");
        assertFalse(client.isActive(), "but the connection is not handed out again");
        assertFalse(channel.finishAndReleaseAll());
    }
}
