package io.estuary.worker;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.network.server.RpcHandler;
import io.estuary.network.server.TransportServer;
import io.estuary.network.tls.ServerTls;
import io.estuary.worker.admin.WorkerAdmin;

/**
 * A worker's three servers, each on its configured port and observed by the worker's admin: control requests
 * ({@code worker-rpc}, the internal TLS group), pushed data ({@code worker-push}) and fetches ({@code worker-fetch}),
 * both in the data group. Opens all three or, when one cannot start, closes those it opened and throws. Immutable;
 * the servers themselves are thread-safe.
 */
final class WorkerServers {
    final TransportServer rpc;
    final TransportServer push;
    final TransportServer fetch;

    WorkerServers(
            EstuaryConf conf,
            String host,
            TransportServer.Options options,
            WorkerAdmin admin,
            ServerTls internalTls,
            ServerTls dataTls,
            RpcHandler control,
            io.estuary.worker.push.PushHandler pushes,
            RpcHandler fetches) {
        // How long pushes were held to their applications' allowed rates, by user: the push handler's own count.
        admin.metrics().pushHolds(pushes.throttle()::heldSeconds);
        TransportServer r = null;
        TransportServer p = null;
        try {
            r = new TransportServer(
                    conf,
                    "worker-rpc",
                    host,
                    conf.get(WorkerConfig.RPC_PORT),
                    control,
                    options.observer(admin.observer("rpc")).tls(internalTls));
            p = new TransportServer(
                    conf,
                    "worker-push",
                    host,
                    conf.get(WorkerConfig.PUSH_PORT),
                    pushes,
                    options.observer(admin.observer("push")).tls(dataTls));
            this.fetch = new TransportServer(
                    conf,
                    "worker-fetch",
                    host,
                    conf.get(WorkerConfig.FETCH_PORT),
                    fetches,
                    options.observer(admin.observer("fetch")).tls(dataTls));
        } catch (RuntimeException e) {
            if (r != null) r.close();
            if (p != null) p.close();
            throw e;
        }
        this.rpc = r;
        this.push = p;
    }

    /** Closes the three servers (when the worker cannot start; a running worker closes each in its own turn). */
    void close() {
        fetch.close();
        rpc.close();
        push.close();
    }
}
