package io.estuary.network.rpc;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.estuary.common.protocol.Request;
import io.estuary.common.util.HostNames;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Talks to "the master" given every master endpoint: tries the one that answered last, moves on to the next when
 * it does not answer, and backs off between rounds until the deadline. One log line per switch.
 */
public final class MasterClient {
  private static final Logger LOG = LoggerFactory.getLogger(MasterClient.class);

  private final TransportClientFactory clients;
  private final List<String> endpoints;
  private volatile int current;

  public MasterClient(TransportClientFactory clients, List<String> endpoints) {
    if (endpoints.isEmpty()) throw new IllegalArgumentException("no master endpoints configured");
    this.clients = clients;
    this.endpoints = endpoints;
  }

  public List<String> endpoints() {
    return endpoints;
  }

  /** Sends the request to a master, retrying over all of them for up to {@code waitMs}. */
  public <T extends MessageLite> T ask(Request.Builder request, Parser<T> parser, long waitMs)
      throws RemoteException {
    long deadline = System.currentTimeMillis() + waitMs;
    long backoff = 100;
    RemoteException last = null;
    while (true) {
      int index = current;
      String endpoint = endpoints.get(index % endpoints.size());
      try {
        return ControlClient.ask(clients.client(HostNames.host(endpoint), HostNames.port(endpoint)), request, parser);
      } catch (RemoteException e) {
        if (!isConnectionProblem(e)) throw e; // the master answered: its error is the answer
        last = e;
        if (current == index) {
          current = index + 1;
          if (endpoints.size() > 1) {
            LOG.warn("Master {} unreachable ({}); trying {}", endpoint, e.getMessage(),
                endpoints.get((index + 1) % endpoints.size()));
          }
        }
      }
      if (System.currentTimeMillis() + backoff > deadline) {
        throw new RemoteException("no master reachable at " + endpoints + " within " + waitMs + " ms: "
            + last.getMessage(), last);
      }
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RemoteException("interrupted while looking for a master", e);
      }
      backoff = Math.min(backoff * 2, 2000);
    }
  }

  private static boolean isConnectionProblem(RemoteException e) {
    String m = String.valueOf(e.getMessage());
    return m.startsWith("cannot connect") || m.startsWith("connecting to") || m.startsWith("connection to")
        || m.startsWith("failed to send") || m.startsWith("no answer from");
  }
}
