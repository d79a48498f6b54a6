package io.estuary.master.state.raft;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
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

    public AuthenticatedRaftRpc() {}

    /**
     * Makes the Raft server built with {@code properties} and the returned parameters authenticate every peer with
     * {@code clusterSecret}; {@code failures} counts the connections it refuses.
     */
    public static Parameters configure(RaftProperties properties, byte[] clusterSecret, RaftAuthFailures failures) {
        org.apache.ratis.RaftConfigKeys.Rpc.setType(properties, new AuthenticatedRaftRpc());
        Parameters parameters = new Parameters();
        parameters.put(SECRET, RaftHandshake.checkSecret(clusterSecret), byte[].class);
        parameters.put(FAILURES, failures, RaftAuthFailures.class);
        return parameters;
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
        return new Factory(this, secret, failures == null ? new RaftAuthFailures() : failures);
    }

    @Override
    public String toString() {
        return "authenticated netty";
    }

    private static final class Factory implements ServerFactory {
        private final RpcType type;
        private final byte[] secret;
        private final RaftAuthFailures failures;

        Factory(RpcType type, byte[] secret, RaftAuthFailures failures) {
            this.type = type;
            this.secret = secret;
            this.failures = failures;
        }

        @Override
        public RpcType getRpcType() {
            return type;
        }

        @Override
        public RaftServerRpc newRaftServerRpc(RaftServer server) {
            return new AuthenticatedRaftService(server, type, secret, failures);
        }
    }
}
