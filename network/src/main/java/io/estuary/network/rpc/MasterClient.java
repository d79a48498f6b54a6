package io.estuary.network.rpc;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.estuary.common.protocol.Request;
import io.estuary.common.status.NotLeader;
import io.estuary.common.time.Clock;
import io.estuary.common.util.HostNames;
import io.estuary.network.client.RemoteException;
import io.estuary.network.client.TransportClientFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Talks to "the master" given every master endpoint: sends to the one believed to lead, follows a follower's
 * redirect to the leader, moves on to the next endpoint when one does not answer, and backs off between rounds
 * until the deadline. One log line per leader change.
 */
public final class MasterClient {
    private static final Logger LOG = LoggerFactory.getLogger(MasterClient.class);

    /**
     * The longest one master gets to answer before the next is tried. Longer than a leader's wait for a quorum
     * (estuary.master.ha.submitTimeout, 10 s by default), so a leader cut off answers "not the leader" first; short
     * enough that one wedged master never uses up a caller's whole wait.
     */
    static final long ATTEMPT_TIMEOUT_MS = 15_000;

    private final TransportClientFactory clients;
    private final List<String> endpoints;
    /** Reads the deadlines of {@link #ask}. */
    private final Clock clock;

    private volatile String current;

    public MasterClient(TransportClientFactory clients, List<String> endpoints) {
        this(clients, endpoints, Clock.system());
    }

    /** A client whose deadlines read {@code clock} (a test's manual clock). */
    public MasterClient(TransportClientFactory clients, List<String> endpoints, Clock clock) {
        if (endpoints.isEmpty()) throw new IllegalArgumentException("no master endpoints configured");
        this.clients = clients;
        this.clock = clock;
        this.endpoints = new CopyOnWriteArrayList<>(endpoints);
        this.current = endpoints.get(0);
    }

    public List<String> endpoints() {
        return endpoints;
    }

    /** The master this client sends to next. */
    public String current() {
        return current;
    }

    /** Sends the request to the leading master, retrying over all of them for up to {@code waitMs}. */
    public <T extends MessageLite> T ask(Request.Builder request, Parser<T> parser, long waitMs)
            throws RemoteException {
        long deadline = clock.nanos() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        long backoff = 50;
        RemoteException last = null;
        boolean redirected = false;
        while (true) {
            String endpoint = current;
            try {
                return attempt(endpoint, request, parser, deadline);
            } catch (RemoteException e) {
                last = e;
                if (e.status() == io.estuary.common.status.StatusCode.NOT_LEADER) {
                    String leader = NotLeader.leader(e.getMessage());
                    last = new RemoteException(e.status(), NotLeader.describe(endpoint, e.getMessage()), e);
                    if (leader != null && !leader.equals(endpoint)) {
                        if (!endpoints.contains(leader)) endpoints.add(leader);
                        switchTo(endpoint, leader, "the leader is now " + leader);
                        if (!redirected) { // follow the first redirect at once; back off if redirects go round in
                            // circles
                            redirected = true;
                            if (clock.nanos() - deadline < 0) continue;
                        }
                    } else {
                        // This master knows no leader (an election, or it is cut off): ask the next one.
                        switchTo(endpoint, next(endpoint), endpoint + " knows no leader");
                    }
                } else if (e.isConnectionFailure()) {
                    switchTo(endpoint, next(endpoint), endpoint + " unreachable (" + e.getMessage() + ")");
                } else if (e.status() != io.estuary.common.status.StatusCode.RETRY_LATER) {
                    throw e; // the leader answered: its error is the answer
                } // else the leader is busy or throttles this client: the same one again after the back-off
            }
            if (clock.nanos() + TimeUnit.MILLISECONDS.toNanos(backoff) - deadline > 0) {
                if (last.status() == io.estuary.common.status.StatusCode.RETRY_LATER) {
                    throw new RemoteException(
                            last.status(),
                            "the leading master still asked to retry later after " + waitMs + " ms: "
                                    + last.getMessage(),
                            last);
                }
                throw new RemoteException(
                        "no master reachable at " + endpoints + " within " + waitMs + " ms: " + last.getMessage(),
                        last);
            }
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RemoteException("interrupted while looking for a master", e);
            }
            backoff = Math.min(backoff * 2, 1000);
        }
    }

    /**
     * One try at one master, never longer than the time left before {@code deadline} ({@link Clock#nanos}) nor
     * {@link #ATTEMPT_TIMEOUT_MS}.
     */
    private <T extends MessageLite> T attempt(String endpoint, Request.Builder request, Parser<T> parser, long deadline)
            throws RemoteException {
        long left = Math.min(ATTEMPT_TIMEOUT_MS, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanos())));
        try {
            return ControlClient.askAsync(
                            clients.client(HostNames.host(endpoint), HostNames.port(endpoint)), request, parser)
                    .get(left, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new RemoteException(
                    io.estuary.common.status.StatusCode.CONNECTION_FAILED,
                    "no answer from " + endpoint + " within " + left + " ms",
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RemoteException("interrupted while waiting for " + endpoint, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RemoteException) throw (RemoteException) c;
            throw new RemoteException(String.valueOf(c), c);
        }
    }

    private String next(String endpoint) {
        int i = endpoints.indexOf(endpoint);
        return endpoints.get((i + 1) % endpoints.size());
    }

    private synchronized void switchTo(String from, String to, String why) {
        if (!current.equals(from) || from.equals(to)) return; // someone else already moved on
        current = to;
        LOG.info("Master: {}; using {}", why, to);
    }
}
