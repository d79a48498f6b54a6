package io.estuary.testing;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;

/**
 * Server configurations for tests: loopback host and every listening port, HTTP/admin included, ephemeral (0), so a
 * test never collides with anything else on the machine. A port the overrides set (e.g. a restart on the same ports)
 * is kept. Stateless.
 */
public final class TestConfs {
    private TestConfs() {}

    /** A master on 127.0.0.1 with its RPC and HTTP ports ephemeral, on top of {@code overrides}. */
    public static EstuaryConf master(EstuaryConf overrides) {
        EstuaryConf c = overrides.copy();
        setIfAbsent(c, MasterConfig.HOST.key(), "127.0.0.1");
        setIfAbsent(c, MasterConfig.PORT.key(), "0");
        setIfAbsent(c, MasterConfig.HTTP_PORT.key(), "0");
        return c;
    }

    public static EstuaryConf master() {
        return master(new EstuaryConf());
    }

    /** A worker on 127.0.0.1 with its RPC, push, fetch and HTTP ports ephemeral, on top of {@code overrides}. */
    public static EstuaryConf worker(EstuaryConf overrides) {
        EstuaryConf c = overrides.copy();
        setIfAbsent(c, WorkerConfig.HOST.key(), "127.0.0.1");
        setIfAbsent(c, WorkerConfig.RPC_PORT.key(), "0");
        setIfAbsent(c, WorkerConfig.PUSH_PORT.key(), "0");
        setIfAbsent(c, WorkerConfig.FETCH_PORT.key(), "0");
        setIfAbsent(c, WorkerConfig.HTTP_PORT.key(), "0");
        return c;
    }

    public static EstuaryConf worker() {
        return worker(new EstuaryConf());
    }

    private static void setIfAbsent(EstuaryConf c, String key, String value) {
        if (!c.toMap().containsKey(key)) c.set(key, value);
    }
}
