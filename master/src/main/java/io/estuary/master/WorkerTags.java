package io.estuary.master;

import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import io.estuary.common.tags.TagExpression;
import io.estuary.master.protocol.WorkerTagsChanged;
import io.estuary.master.state.WorkerId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The tags each worker declares in its configuration ({@code estuary.worker.tags}), as it reported them to this
 * leader with its registration and every heartbeat, and the choice of workers an application's tag expression makes
 * ({@code estuary.client.tags}), over the tags with operators' changes ({@code WorkerTagsChanged}, kept in the agreed
 * state). The declared tags are soft state, like the workers' load: not logged; a new leader learns each worker's tags
 * from its next heartbeat, and until then that worker matches no expression but the empty one. Thread-safe.
 */
final class WorkerTags {
    /** By WorkerId; absent: not reported since this master leads. */
    private final Map<String, List<String>> reported = new ConcurrentHashMap<>();

    void report(String workerId, List<String> tags) {
        reported.put(workerId, Collections.unmodifiableList(new ArrayList<>(tags)));
    }

    void forget(String workerId) {
        reported.remove(workerId);
    }

    void clear() {
        reported.clear();
    }

    /** A worker's tags as it reported them, or null when it has not reported them to this leader yet. */
    List<String> declared(String workerId) {
        return reported.get(workerId);
    }

    /** A worker's tags: the ones it declares, without those an operator removed, with those an operator added. */
    static List<String> effective(List<String> declared, WorkerTagsChanged change) {
        if (change == null) return declared;
        List<String> out = new ArrayList<>();
        for (String t : declared) if (!change.getRemovedList().contains(t)) out.add(t);
        for (String t : change.getAddedList()) if (!out.contains(t)) out.add(t);
        return out;
    }

    /** The expression of a request; BAD_REQUEST when it does not parse. */
    static TagExpression parse(String text) {
        try {
            return TagExpression.parse(text);
        } catch (IllegalArgumentException e) {
            throw new StatusException(StatusCode.BAD_REQUEST, e.getMessage());
        }
    }

    /**
     * The workers of {@code usable} whose tags match {@code expression} ({@code usable} itself for the empty one). None
     * matching is refused: RETRY_LATER while some usable worker has not reported its tags to this master yet (a new
     * leader), FATAL otherwise, naming the expression and the tags there are.
     */
    List<WorkerInfo> matching(
            List<WorkerInfo> usable,
            TagExpression expression,
            Function<String, WorkerTagsChanged> changes,
            String source) {
        if (expression.isAny()) return usable;
        List<WorkerInfo> out = new ArrayList<>();
        int unknown = 0;
        for (WorkerInfo w : usable) {
            String id = WorkerId.of(w.getAddress());
            List<String> tags = reported.get(id);
            if (tags == null) unknown++;
            else if (expression.matches(effective(tags, changes.apply(id)))) out.add(w);
        }
        if (!out.isEmpty() || usable.isEmpty()) return out;
        if (unknown > 0) {
            throw new StatusException(
                    StatusCode.RETRY_LATER,
                    "no worker known to match tag expression '" + expression + "' yet: " + unknown + " of "
                            + usable.size() + " usable workers have not told this master their tags since it leads");
        }
        throw new StatusException(
                StatusCode.FATAL,
                "no active worker matches tag expression '" + expression + "' (" + source + "); the " + usable.size()
                        + " usable workers have tags: " + census(usable, changes));
    }

    /** "team=a x2, team=b x1, (none) x1": what tags the workers have, for a refusal. */
    private String census(List<WorkerInfo> workers, Function<String, WorkerTagsChanged> changes) {
        Map<String, Integer> counts = new TreeMap<>();
        for (WorkerInfo w : workers) {
            String id = WorkerId.of(w.getAddress());
            List<String> tags = effective(reported.getOrDefault(id, Collections.emptyList()), changes.apply(id));
            if (tags.isEmpty()) counts.merge("(none)", 1, Integer::sum);
            for (String t : tags) counts.merge(t, 1, Integer::sum);
        }
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Integer> e : counts.entrySet()) {
            if (b.length() > 0) b.append(", ");
            b.append(e.getKey()).append(" x").append(e.getValue());
        }
        return b.toString();
    }
}
