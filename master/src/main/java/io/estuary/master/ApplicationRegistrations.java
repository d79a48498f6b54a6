package io.estuary.master;

import static io.estuary.master.LoggedChanges.after;
import static io.estuary.master.LoggedChanges.command;

import com.google.protobuf.ByteString;
import io.estuary.common.protocol.ApplicationHeartbeatRequest;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.RegisterApplicationRequest;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.master.protocol.ApplicationPrincipalBound;
import io.estuary.master.protocol.ApplicationRegistered;
import io.estuary.master.state.StateLog;
import io.estuary.network.auth.Identity;
import io.estuary.network.rpc.ControlRpcHandler.Reply;
import io.estuary.network.rpc.RequestIds;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which applications the master knows, and who runs each: registrations (with authentication on, the application's
 * secret), heartbeats, and the principal (user, tenant) bound to an application id.
 *
 * <p>A principal is bound once, by the first claim the leader accepts: the registration's with authentication on
 * (made on a connection that proves nothing, but logged with the secret that every later request must prove), or the
 * first heartbeat's without it. Any later claim of another user or tenant for that id is FORBIDDEN, naming both, so
 * nothing an application sends after it registered can pass for another user. The claim itself is the engine's word
 * at that first moment (Spark's user, Hadoop's UGI): binding stops later changes, not a false first claim.
 *
 * <p>A principal is logged ({@code ApplicationRegistered.principal}, {@code ApplicationPrincipalBound}: Raft log
 * format 2) only with authentication on, and only while every master of the group applies that format ({@link
 * StateLog#groupLogFormat}); otherwise the leader keeps it in memory (and logs it on the next claim once it can). With
 * authentication off a principal is the application's word against nobody's, so it is not worth an entry that would
 * keep the masters from a downgrade to a release without format 2; a new leader binds the next claim it sees.
 *
 * <p>Only the leader calls this. Thread-safe: request threads call it concurrently.
 */
final class ApplicationRegistrations {
    private static final Logger LOG = LoggerFactory.getLogger(ApplicationRegistrations.class);
    /** Principals kept in memory at most; beyond it a new claim is asked to retry (RETRY_LATER). */
    static final int MAX_UNLOGGED = 100_000;

    private final StateLog log;
    private final ApplicationSecrets secrets;
    private final LivenessTracker appLiveness;
    /** Principals bound while the group could not log them; dropped once logged or their application is gone. */
    private final Map<String, ApplicationPrincipal> unlogged = new ConcurrentHashMap<>();

    ApplicationRegistrations(StateLog log, ApplicationSecrets secrets, LivenessTracker appLiveness) {
        this(
                log,
                secrets,
                appLiveness,
                app -> io.estuary.common.protocol.ApplicationHeartbeatResponse.getDefaultInstance());
    }

    /** {@code answers}: what a heartbeat of an application is answered (its quota warnings, shuffles stopped). */
    ApplicationRegistrations(
            StateLog log,
            ApplicationSecrets secrets,
            LivenessTracker appLiveness,
            java.util.function.Function<String, io.estuary.common.protocol.ApplicationHeartbeatResponse> answers) {
        this.answers = answers;
        this.log = log;
        this.secrets = secrets;
        this.appLiveness = appLiveness;
    }

    void heartbeat(ApplicationHeartbeatRequest r, Reply reply, long now) {
        String app = r.getAppId();
        ApplicationPrincipal claim = r.hasPrincipal() ? checked(r.getPrincipal()) : null;
        appLiveness.touch(app, now);
        CompletableFuture<Void> known = ensureApplication(app);
        after(claim != null ? known.thenCompose(v -> bind(app, claim)) : known, reply, () -> answers.apply(app));
    }

    private final java.util.function.Function<String, io.estuary.common.protocol.ApplicationHeartbeatResponse> answers;

    /**
     * Registers an application's secret (sealed by its lifecycle manager for this master's key, see {@link
     * ApplicationSecrets#unseal}): logged sealed under the cluster-derived key, with its principal. Idempotent for the
     * same secret and principal; another secret for a registered application is FORBIDDEN, and so is another
     * principal. With authentication off the application is registered as by any other request, the secret is not
     * kept, and the principal is bound all the same.
     */
    void register(RegisterApplicationRequest r, Identity who, Reply reply, long now) {
        String app = r.getAppId();
        byte[] secret = secrets.unseal(r, who);
        ApplicationPrincipal claim = claimOf(r);
        appLiveness.touch(app, now);
        if (!secrets.enabled()) {
            after(ensureApplication(app, false).thenCompose(v -> bind(app, claim)), reply, Empty::getDefaultInstance);
            return;
        }
        if (secrets.hasSecret(app)) {
            if (!secrets.matches(app, secret)) throw anotherSecret(app);
            after(bind(app, claim), reply, Empty::getDefaultInstance);
            return;
        }
        ApplicationPrincipal bound = principalOf(app);
        if (bound != null && !same(bound, claim)) throw anotherPrincipal(app, bound, claim); // before any entry
        LOG.info("Application {} registered its secret ({})", app, describe(claim));
        ApplicationRegistered.Builder registered =
                ApplicationRegistered.newBuilder().setAppId(app).setSealedSecret(secrets.sealForLog(app, secret));
        if (loggable()) registered.setPrincipal(claim);
        CompletableFuture<Void> logged = log.submit(command(c -> c.setApplicationRegistered(registered)));
        // Of two registrations racing with different secrets the first logged stays: the other is refused.
        after(
                logged.thenCompose(v -> {
                    if (!secrets.matches(app, secret)) throw anotherSecret(app);
                    return bind(app, claim);
                }),
                reply,
                Empty::getDefaultInstance);
    }

    /** What a registration claims: its principal, or (a 0.1.0 client) its user alone; checked. */
    private static ApplicationPrincipal claimOf(RegisterApplicationRequest r) {
        if (r.hasPrincipal()
                && !r.getUser().isEmpty()
                && !r.getUser().equals(r.getPrincipal().getUser())) {
            throw new IllegalArgumentException("the registration of " + r.getAppId() + " names user '" + r.getUser()
                    + "' and principal user '" + r.getPrincipal().getUser() + "'; they must agree");
        }
        return checked(
                r.hasPrincipal()
                        ? r.getPrincipal()
                        : ApplicationPrincipal.newBuilder().setUser(r.getUser()).build());
    }

    /**
     * The claim as bound and compared: its user and tenant only (a newer client's extra fields, unknown here, would
     * otherwise make the same claim differ from the logged one); BAD_REQUEST for a name that cannot be one.
     */
    private static ApplicationPrincipal checked(ApplicationPrincipal claim) {
        String problem = RequestIds.principalProblem("principal", claim);
        if (problem != null) throw new IllegalArgumentException(problem);
        return ApplicationPrincipal.newBuilder()
                .setUser(claim.getUser())
                .setTenant(claim.getTenant())
                .setHighPriority(claim.getHighPriority())
                .build();
    }

    /**
     * Whether a claim names the principal bound: the same user and tenant. Its priority is the one bound first;
     * a claim of another one is not refused, nor taken.
     */
    private static boolean same(ApplicationPrincipal bound, ApplicationPrincipal claim) {
        return bound.getUser().equals(claim.getUser()) && bound.getTenant().equals(claim.getTenant());
    }

    /**
     * Binds {@code claim} to the application unless it has a principal already: then the claim must be that one
     * (FORBIDDEN otherwise). Completes once the binding is logged, or kept in memory where the group cannot log it.
     */
    CompletableFuture<Void> bind(String app, ApplicationPrincipal claim) {
        ApplicationPrincipal logged = log.stateMachine().read(s -> s.principal(app));
        ApplicationPrincipal bound = logged != null ? logged : unlogged.get(app);
        if (bound != null) {
            if (!same(bound, claim)) throw anotherPrincipal(app, bound, claim);
            if (logged == null && loggable()) return logBinding(app, bound);
            return CompletableFuture.completedFuture(null);
        }
        if (!loggable()) return keep(app, claim);
        LOG.info("Application {} runs as {}", app, describe(claim));
        return logBinding(app, claim);
    }

    /** Binds {@code claim} in this leader's memory only (see the class doc). */
    private CompletableFuture<Void> keep(String app, ApplicationPrincipal claim) {
        if (!log.stateMachine().read(s -> s.hasApplication(app))) return CompletableFuture.completedFuture(null);
        if (unlogged.size() >= MAX_UNLOGGED && !unlogged.containsKey(app)) {
            throw new StatusException(
                    StatusCode.RETRY_LATER,
                    "this master keeps " + MAX_UNLOGGED + " principals it cannot log yet; try again later");
        }
        ApplicationPrincipal first = unlogged.putIfAbsent(app, claim);
        if (first != null && !same(first, claim)) throw anotherPrincipal(app, first, claim);
        if (first == null) LOG.info("Application {} runs as {} (not logged)", app, describe(claim));
        return CompletableFuture.completedFuture(null);
    }

    private CompletableFuture<Void> logBinding(String app, ApplicationPrincipal claim) {
        return log.submit(command(c -> c.setApplicationPrincipalBound(
                        ApplicationPrincipalBound.newBuilder().setAppId(app).setPrincipal(claim))))
                .handle((v, e) -> {
                    if (e != null) {
                        // A member became unreachable since loggable() said yes: keep it instead, as for format 1.
                        Throwable t = LoggedChanges.cause(e);
                        if (t instanceof StatusException
                                && ((StatusException) t).status() == StatusCode.VERSION_MISMATCH) {
                            return keep(app, claim);
                        }
                        throw new java.util.concurrent.CompletionException(e);
                    }
                    unlogged.remove(app);
                    // Of two claims racing for an unbound application the first applied stays: the other is refused.
                    ApplicationPrincipal bound = log.stateMachine().read(s -> s.principal(app));
                    if (bound != null && !same(bound, claim)) throw anotherPrincipal(app, bound, claim);
                    return CompletableFuture.<Void>completedFuture(null);
                })
                .thenCompose(f -> f);
    }

    /** The application's principal: logged, or kept by this leader; null when none is bound. */
    ApplicationPrincipal principalOf(String app) {
        ApplicationPrincipal logged = log.stateMachine().read(s -> s.principal(app));
        return logged != null ? logged : unlogged.get(app);
    }

    /**
     * The principal sealed for the workers a driver reserves on (with its secret, see {@link
     * ApplicationSecrets#sealedForReservations}): empty with authentication off, for another identity, or while none
     * is bound.
     */
    ByteString sealedPrincipal(String app, Identity who) {
        ApplicationPrincipal p = principalOf(app);
        return p == null ? ByteString.EMPTY : secrets.sealPrincipal(app, p, who);
    }

    /** Whether principals are logged: with authentication on, and every master of the group applies format 2. */
    private boolean loggable() {
        return secrets.enabled() && log.groupLogFormat() >= 2;
    }

    /** Forgets what this leader kept of an application that ended or expired. */
    void forget(String app) {
        unlogged.remove(app);
    }

    /** This master gained or lost leadership: what it kept is another leader's business now, or stale. */
    void leadershipChanged() {
        unlogged.clear();
    }

    /** {@link #ensureApplication}, a refusal included in the future: a decision under way must still end. */
    CompletableFuture<Void> registered(String app) {
        try {
            return ensureApplication(app);
        } catch (RuntimeException e) {
            CompletableFuture<Void> refused = new CompletableFuture<>();
            refused.completeExceptionally(e);
            return refused;
        }
    }

    CompletableFuture<Void> ensureApplication(String app) {
        return ensureApplication(app, secrets.registrationRequired());
    }

    /**
     * Registers the application if the state does not know it. {@code needsSecret}: with authentication enforced an
     * application registers its secret first (and again after it expired), so an unknown one is refused
     * UNAUTHENTICATED instead of registered without a secret.
     */
    private CompletableFuture<Void> ensureApplication(String app, boolean needsSecret) {
        if (log.stateMachine().read(s -> s.hasApplication(app))) return CompletableFuture.completedFuture(null);
        if (needsSecret) {
            throw new StatusException(
                    StatusCode.UNAUTHENTICATED,
                    "application " + app + " is not registered (never, or it ended or expired): with authentication "
                            + "on its lifecycle manager registers its secret first (RegisterApplication)");
        }
        LOG.info("Application {} registered", app);
        return log.submit(command(c ->
                c.setApplicationRegistered(ApplicationRegistered.newBuilder().setAppId(app))));
    }

    private static StatusException anotherSecret(String app) {
        return new StatusException(
                StatusCode.FORBIDDEN, "application " + app + " is registered already, with another secret");
    }

    private static StatusException anotherPrincipal(
            String app, ApplicationPrincipal bound, ApplicationPrincipal claim) {
        return new StatusException(
                StatusCode.FORBIDDEN,
                "application " + app + " is bound to " + describe(bound) + " since it registered; it may not claim "
                        + describe(claim));
    }

    /** "user alice, tenant t1" (or "no tenant"), for messages and logs. */
    static String describe(ApplicationPrincipal p) {
        return "user '" + p.getUser() + "', "
                + (p.getTenant().isEmpty() ? "no tenant" : "tenant '" + p.getTenant() + "'");
    }
}
