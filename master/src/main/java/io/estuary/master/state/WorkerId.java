package io.estuary.master.state;

import io.estuary.common.protocol.WorkerAddress;

/** A worker's identity: host and its fixed ports. A worker restarted on the same host and ports is the same worker. */
public final class WorkerId {
    private WorkerId() {}

    public static String of(WorkerAddress a) {
        return a.getHost() + ":" + a.getRpcPort() + ":" + a.getPushPort() + ":" + a.getFetchPort();
    }
}
