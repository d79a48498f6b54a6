package io.estuary.master.state.raft;

import java.io.IOException;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.server.ServerFactory;

/**
 * The Ratis RPC type of masters with authentication on: {@link #configure} selects it in a Raft server's properties
 * and hands it the cluster secret through the server's {@link Parameters} (never through properties, which Ratis
 * logs). Ratis instantiates this class by name (public, no-argument constructor). Stateless.
 */
public final class AuthenticatedRaftRpc implements RpcType {
    private static final String SECRET = "estuary.raft.clusterSecret";
    private static final String FAILURES = "estuary.raft.authFailures";
    private static final String PERMISSIVE = "estuary.raft.permissive";
    private static final String TLS = "estuary.raft.tls";

    public AuthenticatedRaftRpc() {}

    /**
     * Makes the Raft server built with {@code properties} and the returned parameters authenticate every peer with
     * {@code clusterSecret}; {@code failures} counts the connections it refuses (and, {@code permissive}, those it
     * admits without a proof). With {@code tls} (null: none) every connection, both ways, is TLS first.
     */
    public static Parameters configure(
            RaftProperties properties,
            byte[] clusterSecret,
            RaftAuthFailures failures,
            boolean permissive,
            RaftTls tls) {
        org.apache.ratis.RaftConfigKeys.Rpc.setType(properties, new AuthenticatedRaftRpc());
        Parameters parameters = new Parameters();
        parameters.put(SECRET, RaftHandshake.checkSecret(clusterSecret), byte[].class);
        parameters.put(FAILURES, failures, RaftAuthFailures.class);
        parameters.put(PERMISSIVE, permissive, Boolean.class);
        if (tls != null) parameters.put(TLS, tls, RaftTls.class);
        return parameters;
    }

    /**
     * A stale read at index 0 of {@code target}'s state machine over {@code server}'s authenticated transport, or
     * null when {@code server} does not use it (then ask with a Ratis client).
     */
    public static RaftClientReply staleRead(RaftServer server, RaftPeerId target) throws IOException {
        RaftServerRpc rpc = server.getServerRpc();
        return rpc instanceof AuthenticatedRaftService ? ((AuthenticatedRaftService) rpc).staleRead(target) : null;
    }

    @Override
    public String name() {
        return AuthenticatedRaftRpc.class.getName();
    }

    @Override
    public RpcFactory newFactory(Parameters parameters) {
        byte[] secret = parameters == null ? null : parameters.get(SECRET, byte[].class);
        if (secret == null) {
            throw new IllegalStateException("the authenticated Raft transport was selected without a cluster secret");
        }
        RaftAuthFailures failures = parameters.get(FAILURES, RaftAuthFailures.class);
        Boolean permissive = parameters.get(PERMISSIVE, Boolean.class);
        RaftTls tls = parameters.get(TLS, RaftTls.class);
        return new Factory(
                this,
                secret,
                failures == null ? new RaftAuthFailures() : failures,
                Boolean.TRUE.equals(permissive),
                tls);
    }

    @Override
    public String toString() {
        return "authenticated netty";
    }

    private static final class Factory implements ServerFactory {
        private final RpcType type;
        private final byte[] secret;
        private final RaftAuthFailures failures;
        private final boolean permissive;
        private final RaftTls tls;

        Factory(RpcType type, byte[] secret, RaftAuthFailures failures, boolean permissive, RaftTls tls) {
            this.type = type;
            this.secret = secret;
            this.failures = failures;
            this.permissive = permissive;
            this.tls = tls;
        }

        @Override
        public RpcType getRpcType() {
            return type;
        }

        @Override
        public RaftServerRpc newRaftServerRpc(RaftServer server) {
            return new AuthenticatedRaftService(server, type, secret, failures, permissive, tls);
        }
    }
}
