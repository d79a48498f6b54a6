package io.estuary.master.admin;

import io.estuary.common.config.ConfigException;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.tags.TagExpression;
import io.estuary.master.protocol.DefaultTagsSet;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.QuotaScope;
import io.estuary.master.protocol.WorkerTagsChanged;
import io.estuary.master.quota.QuotaSpec;
import io.estuary.master.state.MasterState;
import io.estuary.master.state.WorkerId;
import io.estuary.server.admin.AdminHttpServer.Request;
import io.estuary.server.admin.AdminHttpServer.Response;
import io.estuary.server.admin.AdminViews;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The tag routes of {@link MasterAdminEndpoint}: {@code GET /api/tags} (each registered worker's declared, added,
 * removed and effective tags; the default expressions), {@code POST /api/tags/worker?id=&add=&remove=} (an operator's
 * tags on a worker over the ones it declares) and {@code POST /api/tags/default?scope=&name=&expression=} (the
 * expression every application of a user, tenant or the cluster is held to; empty clears it). Changes are made by the
 * leader through the replicated log, so every master agrees and restarts keep them; a tag or expression that does not
 * parse gets 400 naming it, an unknown worker 404. Thread-safe: holds nothing of its own.
 */
final class TagAdmin {
    private final AdministeredMaster master;
    private final Supplier<AdminViews.ServedBy> servedBy;
    private final Supplier<Response> notLeader;

    TagAdmin(AdministeredMaster master, Supplier<AdminViews.ServedBy> servedBy, Supplier<Response> notLeader) {
        this.master = master;
        this.servedBy = servedBy;
        this.notLeader = notLeader;
    }

    Response list(Request r) {
        List<AdminViews.WorkerTagsEntry> workers = new ArrayList<>();
        List<AdminViews.DefaultTagsEntry> defaults = new ArrayList<>();
        master.state(s -> {
            for (WorkerInfo w : s.workers()) {
                String id = WorkerId.of(w.getAddress());
                WorkerTagsChanged c = s.workerTags(id);
                List<String> declared = master.declaredTags(id);
                List<String> added = c == null ? Collections.<String>emptyList() : c.getAddedList();
                List<String> removed = c == null ? Collections.<String>emptyList() : c.getRemovedList();
                List<String> tags = null;
                if (declared != null) {
                    Set<String> t = new LinkedHashSet<>(declared);
                    t.removeAll(removed);
                    t.addAll(added);
                    tags = new ArrayList<>(t);
                }
                workers.add(new AdminViews.WorkerTagsEntry(
                        id, declared, new ArrayList<>(added), new ArrayList<>(removed), tags));
            }
            for (DefaultTagsSet d : s.defaultTagSets()) {
                defaults.add(
                        new AdminViews.DefaultTagsEntry(QuotaSpec.label(d.getScope()), d.getName(), d.getExpression()));
            }
            return null;
        });
        return Response.json(200, new AdminViews.Tags(servedBy.get(), workers, defaults));
    }

    /** Synchronized: two changes of one worker at once must not lose one (each reads the previous one). */
    synchronized Response worker(Request r) {
        String id = r.query("id");
        if (id == null || id.isEmpty())
            return Response.error(400, "give the worker: ?id=<host:rpcPort:pushPort:fetchPort>");
        List<String> add = tags(r.query("add"));
        List<String> remove = tags(r.query("remove"));
        String problem = TagExpression.tagsProblem(add);
        if (problem == null) problem = TagExpression.tagsProblem(remove);
        if (problem != null) return Response.error(400, problem);
        if (add.isEmpty() && remove.isEmpty()) return Response.error(400, "give tags to add=a,b and/or remove=c");
        for (String t : add) {
            if (remove.contains(t)) return Response.error(400, "tag '" + t + "' is both added and removed");
        }
        if (!master.isLeader()) return notLeader.get();
        WorkerTagsChanged was = master.state(s -> s.worker(id) == null ? null : orEmpty(s, id));
        if (was == null) return Response.error(404, "no registered worker " + id);
        Set<String> added = new LinkedHashSet<>(was.getAddedList());
        Set<String> removed = new LinkedHashSet<>(was.getRemovedList());
        for (String t : add) {
            removed.remove(t);
            added.add(t);
        }
        // Removing a tag an operator added undoes the addition; any other hides a tag the worker declares.
        for (String t : remove) {
            if (!added.remove(t)) removed.add(t);
        }
        WorkerTagsChanged now = WorkerTagsChanged.newBuilder()
                .setWorkerId(id)
                .addAllAdded(added)
                .addAllRemoved(removed)
                .build();
        Response failed = LoggedChange.submit(
                master, MasterCommand.newBuilder().setWorkerTagsChanged(now).build(), "tags");
        if (failed != null) return failed;
        return Response.json(200, new AdminViews.WorkerTagsSet(id, new ArrayList<>(added), new ArrayList<>(removed)));
    }

    private static WorkerTagsChanged orEmpty(MasterState s, String id) {
        WorkerTagsChanged c = s.workerTags(id);
        return c != null ? c : WorkerTagsChanged.newBuilder().setWorkerId(id).build();
    }

    Response defaults(Request r) {
        QuotaScope scope;
        String name;
        try {
            scope = QuotaSpec.scope("scope", r.query("scope"));
            name = QuotaAdmin.name(scope, r.query("name"));
        } catch (ConfigException e) {
            return Response.error(400, e.getMessage());
        }
        String expression =
                r.query("expression") == null ? "" : r.query("expression").trim();
        if (!expression.isEmpty()) {
            try {
                expression = TagExpression.parse(expression).toString();
            } catch (IllegalArgumentException e) {
                return Response.error(400, e.getMessage());
            }
        }
        if (!master.isLeader()) return notLeader.get();
        Response failed = LoggedChange.submit(
                master,
                MasterCommand.newBuilder()
                        .setDefaultTagsSet(DefaultTagsSet.newBuilder()
                                .setScope(scope)
                                .setName(name)
                                .setExpression(expression))
                        .build(),
                "tags");
        if (failed != null) return failed;
        return Response.json(200, new AdminViews.DefaultTagsChanged(QuotaSpec.label(scope), name, expression));
    }

    private static List<String> tags(String text) {
        List<String> out = new ArrayList<>();
        if (text == null) return out;
        for (String t : text.split(",")) {
            String tag = t.trim();
            if (!tag.isEmpty() && !out.contains(tag)) out.add(tag);
        }
        return out;
    }
}
