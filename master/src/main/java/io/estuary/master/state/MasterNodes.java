package io.estuary.master.state;

import io.estuary.common.config.ConfigException;
import io.estuary.common.config.MasterConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The masters of an HA group, parsed from {@code estuary.master.ha.nodes} entries {@code id=host:rpcPort:raftPort}. */
public final class MasterNodes {
    /** One master. */
    public static final class Node {
        public final String id;
        public final String host;
        public final int rpcPort;
        public final int raftPort;

        Node(String id, String host, int rpcPort, int raftPort) {
            this.id = id;
            this.host = host;
            this.rpcPort = rpcPort;
            this.raftPort = raftPort;
        }

        public String rpcEndpoint() {
            return host + ":" + rpcPort;
        }

        public String raftEndpoint() {
            return host + ":" + raftPort;
        }
    }

    private final List<Node> nodes;

    private MasterNodes(List<Node> nodes) {
        this.nodes = Collections.unmodifiableList(nodes);
    }

    public static MasterNodes parse(List<String> entries) {
        List<Node> out = new ArrayList<>();
        for (String e : entries) {
            int eq = e.indexOf('=');
            String[] hp = e.substring(eq + 1).split(":");
            out.add(new Node(e.substring(0, eq), hp[0], Integer.parseInt(hp[1]), Integer.parseInt(hp[2])));
        }
        return new MasterNodes(out);
    }

    public List<Node> all() {
        return nodes;
    }

    public boolean isEmpty() {
        return nodes.isEmpty();
    }

    public Node get(String id) {
        Node n = find(id);
        if (n != null) return n;
        throw new ConfigException(
                MasterConfig.HA_ID.key() + ": '" + id + "' is not one of the ids in " + MasterConfig.HA_NODES.key());
    }

    /** The node with this id, or null. */
    public Node find(String id) {
        for (Node n : nodes) if (n.id.equals(id)) return n;
        return null;
    }
}
