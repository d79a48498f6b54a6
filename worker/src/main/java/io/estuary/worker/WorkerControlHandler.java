package io.estuary.worker;

import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.Request;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.worker.commit.CommitHandler;
import io.netty.channel.Channel;

/** Control requests from drivers: reserve slots before a stage, commit them at its end. */
final class WorkerControlHandler extends ControlRpcHandler {
  private final PartitionRegistry registry;
  private final CommitHandler commits;
  private final io.estuary.worker.push.CongestionControl congestion;

  WorkerControlHandler(PartitionRegistry registry, io.estuary.worker.push.CongestionControl congestion) {
    super("worker");
    this.registry = registry;
    this.congestion = congestion;
    this.commits = new CommitHandler(registry);
  }

  @Override
  protected void handle(Channel channel, Request request, Reply reply) {
    switch (request.getPayloadCase()) {
      case RESERVE_SLOTS: {
        ReserveSlotsRequest r = request.getReserveSlots();
        registry.reserve(r.getAppId(), r.getShuffleId(), r.getLocationsList());
        congestion.applicationUser(r.getAppId(), r.getUser());
        reply.ok(Empty.getDefaultInstance());
        break;
      }
      case COMMIT_FILES:
        commits.commit(request.getCommitFiles(), reply);
        break;
      default:
        throw unsupported(request);
    }
  }
}
