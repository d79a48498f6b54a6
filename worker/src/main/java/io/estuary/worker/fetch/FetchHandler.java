package io.estuary.worker.fetch;

import io.estuary.common.protocol.OpenStreamRequest;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.StreamHandle;
import io.estuary.common.util.ShuffleKey;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.server.StreamManager;
import io.estuary.worker.PartitionRegistry;
import io.estuary.worker.storage.CommittedFile;
import io.netty.channel.Channel;

/**
 * The fetch path: opens a stream over a committed partition file and serves its chunks. Opening only looks the
 * file up (files are already merged per partition), so it never blocks the fetch threads.
 */
public final class FetchHandler extends ControlRpcHandler {
  private final PartitionRegistry registry;
  private final StreamRegistry streams = new StreamRegistry();
  private final java.util.concurrent.ScheduledExecutorService sweeper =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
          new io.estuary.common.util.NamedThreadFactory("worker-stream-sweeper"));

  public FetchHandler(PartitionRegistry registry) {
    super("worker fetch server");
    this.registry = registry;
    sweeper.scheduleWithFixedDelay(() -> streams.dropIdle(System.currentTimeMillis(), StreamRegistry.IDLE_MS),
        1, 1, java.util.concurrent.TimeUnit.MINUTES);
  }

  public void close() {
    sweeper.shutdownNow();
  }

  @Override
  protected void handle(Channel channel, Request request, Reply reply) {
    if (request.getPayloadCase() != Request.PayloadCase.OPEN_STREAM) throw unsupported(request);
    OpenStreamRequest r = request.getOpenStream();
    String key = ShuffleKey.of(r.getAppId(), r.getShuffleId());
    CommittedFile file = registry.committedFile(key, r.getPartitionId(), r.getEpoch());
    if (file == null) {
      String why = registry.hasShuffle(key) ? "is not committed on this worker" : "is unknown on this worker "
          + "(unknown application or shuffle, or expired)";
      throw new io.estuary.common.status.StatusException(io.estuary.common.status.StatusCode.UNKNOWN_LOCATION,
          "partition " + r.getPartitionId() + " epoch " + r.getEpoch() + " of shuffle " + key + " " + why);
    }
    long id = file.numChunks() == 0 ? -1 : streams.open(file, channel);
    reply.ok(StreamHandle.newBuilder().setStreamId(id).setNumChunks(file.numChunks()).setTotalBytes(file.length())
        .build());
  }

  /** Streams open now (for the worker's metrics). */
  public int openStreams() {
    return streams.openStreams();
  }

  @Override
  public StreamManager streamManager() {
    return streams;
  }

  @Override
  public void channelInactive(Channel channel) {
    streams.closeStreamsOf(channel);
  }
}
