package io.estuary.master;

import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.tags.TagExpression;
import io.estuary.master.protocol.QuotaScope;
import io.estuary.master.state.StateLog;
import java.util.List;

/**
 * The workers a placement of an application may use: active, not excluded by its driver, and matching its tag
 * expression ({@code estuary.client.tags}) ANDed with the default expressions operators gave the cluster, its tenant
 * and its user (kept in the agreed state): an application may narrow what its defaults allow, never widen it. Tags
 * are the ones workers declare with the changes operators made ({@link WorkerTags}). Only the leader calls this.
 * Thread-safe: it reads the state under its lock and holds nothing.
 */
final class PlacementCandidates {
    private final StateLog log;
    private final WorkerRequests workers;
    private final ApplicationRegistrations registrations;

    PlacementCandidates(StateLog log, WorkerRequests workers, ApplicationRegistrations registrations) {
        this.log = log;
        this.workers = workers;
        this.registrations = registrations;
    }

    /**
     * The usable workers for {@code app}, avoiding {@code excluded} (host:rpcPort names) and matching {@code tags} with
     * its defaults; none matching is refused ({@link WorkerTags#matching}).
     */
    List<WorkerInfo> of(String app, List<String> excluded, String tags) {
        TagExpression own = WorkerTags.parse(tags);
        return log.stateMachine().read(s -> {
            TagExpression expression = own;
            StringBuilder source = new StringBuilder("estuary.client.tags");
            ApplicationPrincipal who = registrations.principalOf(app);
            expression = withDefault(expression, source, s.defaultTags(QuotaScope.QUOTA_CLUSTER, ""), "the cluster");
            if (who != null && !who.getTenant().isEmpty()) {
                expression = withDefault(
                        expression,
                        source,
                        s.defaultTags(QuotaScope.QUOTA_TENANT, who.getTenant()),
                        "tenant " + who.getTenant());
            }
            if (who != null) {
                expression = withDefault(
                        expression,
                        source,
                        s.defaultTags(QuotaScope.QUOTA_USER, who.getUser()),
                        "user " + who.getUser());
            }
            return workers.tags()
                    .matching(
                            SlotPlanner.usable(workers.placementView(), SlotPlanner.excludedBy(excluded)),
                            expression,
                            s::workerTags,
                            source.toString());
        });
    }

    private static TagExpression withDefault(
            TagExpression expression, StringBuilder source, String defaultExpression, String whose) {
        if (defaultExpression.isEmpty()) return expression;
        source.append(" and the default of ").append(whose);
        return expression.and(TagExpression.parse(defaultExpression));
    }
}
