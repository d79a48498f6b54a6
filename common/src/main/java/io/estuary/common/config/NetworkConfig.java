package io.estuary.common.config;

import static io.estuary.common.config.ConfigEntry.Scope.BOTH;

/** Transport settings, shared by servers and clients. */
public final class NetworkConfig {
  private NetworkConfig() {}

  public static final ConfigEntry<Long> MAX_FRAME_SIZE =
      ConfigEntry.builder("estuary.network.maxFrameSize", ConfigType.BYTES)
          .defaultValue("128m").scope(BOTH)
          .check(v -> v >= 1024 && v <= Integer.MAX_VALUE ? null : "must be between 1k and 2g")
          .doc("Largest frame a peer may send. A larger frame is refused and its connection closed; the server "
              + "keeps serving everyone else. A single pushed batch must fit, so keep it above the largest record.")
          .build();

  public static final ConfigEntry<Long> RPC_TIMEOUT =
      ConfigEntry.builder("estuary.network.rpc.timeout", ConfigType.DURATION_MS)
          .defaultValue("120s").scope(BOTH).check(ConfigType.positive())
          .doc("How long a caller waits for the answer to a request (RPC, push, chunk fetch) before it fails.")
          .build();

  public static final ConfigEntry<Long> CONNECT_TIMEOUT =
      ConfigEntry.builder("estuary.network.connect.timeout", ConfigType.DURATION_MS)
          .defaultValue("10s").scope(BOTH).check(ConfigType.positive())
          .doc("How long opening a connection may take.")
          .build();

  public static final ConfigEntry<Integer> IO_THREADS =
      ConfigEntry.builder("estuary.network.io.threads", ConfigType.INT)
          .defaultValue("0").scope(BOTH).check(ConfigType.nonNegative())
          .doc("Netty event-loop threads per server and per client factory; 0 means twice the cores.")
          .build();

  public static final ConfigEntry<Boolean> BIND_WILDCARD =
      ConfigEntry.builder("estuary.network.bindWildcard", ConfigType.BOOLEAN)
          .defaultValue("false")
          .doc("Bind server sockets to every interface (0.0.0.0) instead of the configured host. Off by default: "
              + "a server listens only where it says it does.")
          .build();

  static void touch() {}
}
