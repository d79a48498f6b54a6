package io.estuary.client.lifecycle;

import io.estuary.common.protocol.CommitFilesRequest;
import io.estuary.common.protocol.CommitFilesResponse;
import io.estuary.common.protocol.CommittedPartition;
import io.estuary.common.protocol.EpochFiles;
import io.estuary.common.protocol.LocationRole;
import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClient;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stage end: asks every worker to commit every copy it holds, asks again (up to a retry count, within a deadline)
 * for copies not confirmed, and reports what was committed: per partition, each epoch with its committed copies
 * (primary first). An epoch none of whose copies committed marks its partition incomplete; whether that lost data
 * is for readers to decide with the integrity counts (an epoch nobody pushed to holds nothing). Never skips a
 * failure silently. Stateless apart from its connections; thread-safe.
 */
final class ShuffleCommitter {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleCommitter.class);

  private final TransportClientFactory connections;
  private final String appId;
  private final int retries;
  private final long timeoutMs;

  ShuffleCommitter(TransportClientFactory connections, String appId, int retries, long timeoutMs) {
    this.connections = connections;
    this.appId = appId;
    this.retries = retries;
    this.timeoutMs = timeoutMs;
  }

  private static long key(int partition, int epoch) {
    return ((long) partition << 32) | (epoch & 0xffffffffL);
  }

  /** Commits {@code locations} (every epoch, with peers) of a shuffle with {@code numPartitions} partitions. */
  List<PartitionFiles.Builder> commit(int shuffleId, int numPartitions, List<PartitionLocation> locations) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    Map<String, List<PartitionLocation>> todo = WorkerCalls.copiesByWorker(locations);
    Map<Long, Long> bytes = new HashMap<>();
    Map<Long, List<PartitionLocation>> committed = new HashMap<>();
    List<String> problems = new ArrayList<>();
    for (int round = 0; round <= retries && !todo.isEmpty(); round++) {
      Map<String, CompletableFuture<CommitFilesResponse>> calls = new LinkedHashMap<>();
      for (Map.Entry<String, List<PartitionLocation>> e : todo.entrySet()) {
        calls.put(e.getKey(), ask(shuffleId, e.getValue()));
      }
      Map<String, List<PartitionLocation>> again = new LinkedHashMap<>();
      for (Map.Entry<String, CompletableFuture<CommitFilesResponse>> e : calls.entrySet()) {
        List<PartitionLocation> sent = todo.get(e.getKey());
        CommitFilesResponse r;
        try {
          r = e.getValue().get(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException ex) {
          String why = ex instanceof TimeoutException ? "no answer within the commit timeout" : ex.getCause().getMessage();
          problems.add(e.getKey() + ": " + why);
          if (!(ex instanceof TimeoutException)) again.put(e.getKey(), sent);
          continue;
        } catch (InterruptedException ex) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while committing shuffle " + shuffleId, ex);
        }
        Map<Long, PartitionLocation> byKey = new HashMap<>();
        for (PartitionLocation l : sent) byKey.put(key(l.getPartitionId(), l.getEpoch()), l);
        for (CommittedPartition c : r.getCommittedList()) {
          PartitionLocation l = byKey.remove(key(c.getPartitionId(), c.getEpoch()));
          if (l == null) continue;
          long k = key(c.getPartitionId(), c.getEpoch());
          bytes.merge(k, c.getBytes(), Math::max);
          committed.computeIfAbsent(k, x -> new ArrayList<>()).add(l.toBuilder().clearPeer().build());
        }
        if (!byKey.isEmpty()) {
          problems.add(e.getKey() + ": " + byKey.size() + " locations not committed: " + r.getFailureReason());
          // A location the worker does not know stays unknown: asking again only helps with transient failures.
          List<PartitionLocation> retry = new ArrayList<>();
          for (PartitionLocation l : byKey.values()) if (!unknownOn(r, l)) retry.add(l);
          if (!retry.isEmpty()) again.put(e.getKey(), retry);
        }
      }
      todo = again;
      if (System.currentTimeMillis() >= deadline) break;
    }
    if (!problems.isEmpty()) {
      LOG.warn("Shuffle {} of {}: some copies did not commit (their replicas, or a rerun, stand in): {}", shuffleId,
          appId, problems);
    }
    return files(numPartitions, locations, committed, bytes);
  }

  private static boolean unknownOn(CommitFilesResponse r, PartitionLocation l) {
    for (PartitionLocation f : r.getUnknownList()) {
      if (f.getPartitionId() == l.getPartitionId() && f.getEpoch() == l.getEpoch()) return true;
    }
    return false;
  }

  private CompletableFuture<CommitFilesResponse> ask(int shuffleId, List<PartitionLocation> locs) {
    WorkerAddress w = locs.get(0).getWorker();
    try {
      TransportClient c = connections.client(w.getHost(), w.getRpcPort());
      return ControlClient.askAsync(c, Request.newBuilder().setCommitFiles(CommitFilesRequest.newBuilder()
          .setAppId(appId).setShuffleId(shuffleId).addAllLocations(locs)), CommitFilesResponse.parser());
    } catch (RemoteException | RuntimeException e) {
      CompletableFuture<CommitFilesResponse> f = new CompletableFuture<>();
      f.completeExceptionally(e);
      return f;
    }
  }

  private static List<PartitionFiles.Builder> files(int numPartitions, List<PartitionLocation> locations,
      Map<Long, List<PartitionLocation>> committed, Map<Long, Long> bytes) {
    List<PartitionFiles.Builder> out = new ArrayList<>(numPartitions);
    for (int p = 0; p < numPartitions; p++) out.add(PartitionFiles.newBuilder().setPartitionId(p));
    for (PartitionLocation l : locations) {
      long k = key(l.getPartitionId(), l.getEpoch());
      PartitionFiles.Builder f = out.get(l.getPartitionId());
      List<PartitionLocation> copies = committed.get(k);
      if (copies == null) {
        f.setIncomplete(true);
        continue;
      }
      copies.sort((a, b) -> Integer.compare(a.getRole() == LocationRole.PRIMARY ? 0 : 1,
          b.getRole() == LocationRole.PRIMARY ? 0 : 1));
      f.addEpochs(EpochFiles.newBuilder().setEpoch(l.getEpoch()).addAllCopies(copies).setBytes(bytes.get(k)));
    }
    return out;
  }
}
