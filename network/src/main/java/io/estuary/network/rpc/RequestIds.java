package io.estuary.network.rpc;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import io.estuary.common.protocol.ApplicationPrincipal;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.common.tags.TagExpression;
import io.estuary.common.util.Ids;
import java.util.List;

/**
 * The identifiers of a control request, checked before any handler sees it (see {@link Ids} for the rules): every
 * {@code app_id} (required wherever a request has one: an absent one reads as empty), the {@code shuffle_id} next to
 * it (never negative), every shuffle key a worker reports, and the names that are only shown or compared (user,
 * a principal's user and tenant, excluded workers, a worker's host). Works on the request's payload by field name, so a request type added later
 * with an {@code app_id} is covered without code here. A bad identifier once let in is hard to get rid of: an empty
 * application id made a shuffle key no master could split, and every later heartbeat of that worker failed.
 * Stateless.
 */
public final class RequestIds {
    private RequestIds() {}

    private static final OneofDescriptor PAYLOAD =
            Request.getDescriptor().getOneofs().get(0);

    /** What is wrong with the request's identifiers, as a sentence naming the field; null when nothing is. */
    public static String problem(Request request) {
        FieldDescriptor which = request.getOneofFieldDescriptor(PAYLOAD);
        if (which == null) return null; // no payload: the handler refuses it as unsupported
        Message payload = (Message) request.getField(which);
        String at = which.getName() + ".";
        Descriptor type = payload.getDescriptorForType();
        FieldDescriptor app = type.findFieldByName("app_id");
        String p = null;
        if (app != null) {
            p = Ids.appIdProblem(at + "app_id", (String) payload.getField(app));
            FieldDescriptor shuffle = type.findFieldByName("shuffle_id");
            if (p == null && shuffle != null)
                p = Ids.shuffleIdProblem(at + "shuffle_id", (Integer) payload.getField(shuffle));
        }
        if (p == null) p = each(payload, "shuffle_keys", at, true);
        if (p == null) p = each(payload, "excluded_workers", at, false);
        FieldDescriptor user = type.findFieldByName("user");
        if (p == null && user != null) p = Ids.nameProblem(at + "user", (String) payload.getField(user));
        FieldDescriptor principal = type.findFieldByName("principal");
        if (p == null && principal != null && principal.getMessageType() == ApplicationPrincipal.getDescriptor()) {
            p = principalProblem(at + "principal", (ApplicationPrincipal) payload.getField(principal));
        }
        FieldDescriptor tags = type.findFieldByName("tags");
        if (p == null && tags != null) p = tagsProblem(at + "tags", tags, payload);
        FieldDescriptor worker = type.findFieldByName("worker");
        if (p == null && worker != null && worker.getMessageType() == WorkerInfo.getDescriptor()) {
            String host = ((WorkerInfo) payload.getField(worker)).getAddress().getHost();
            p = host.isEmpty()
                    ? at + "worker.address.host is empty"
                    : Ids.nameProblem(at + "worker.address.host", host);
        }
        return p;
    }

    /** A worker's own tags (repeated: each {@code key} or {@code key=value}) or a tag expression (a single string). */
    private static String tagsProblem(String field, FieldDescriptor f, Message payload) {
        if (f.isRepeated()) {
            @SuppressWarnings("unchecked")
            List<String> values = (List<String>) payload.getField(f);
            String p = TagExpression.tagsProblem(values);
            return p == null ? null : field + ": " + p;
        }
        String p = TagExpression.problem((String) payload.getField(f));
        return p == null ? null : field + ": " + p;
    }

    /** Longest user or tenant name of a principal, in characters: names are shown, logged and used as labels. */
    public static final int MAX_PRINCIPAL_NAME = 255;

    /** What is wrong with a claimed principal's names (control characters, too long); null when nothing is. */
    public static String principalProblem(String field, ApplicationPrincipal p) {
        String problem = Ids.nameProblem(field + ".user", p.getUser());
        if (problem == null) problem = Ids.nameProblem(field + ".tenant", p.getTenant());
        if (problem == null && p.getUser().length() > MAX_PRINCIPAL_NAME) {
            problem = field + ".user has " + p.getUser().length() + " characters; at most " + MAX_PRINCIPAL_NAME;
        }
        if (problem == null && p.getTenant().length() > MAX_PRINCIPAL_NAME) {
            problem = field + ".tenant has " + p.getTenant().length() + " characters; at most " + MAX_PRINCIPAL_NAME;
        }
        return problem;
    }

    private static String each(Message payload, String name, String at, boolean shuffleKeys) {
        FieldDescriptor f = payload.getDescriptorForType().findFieldByName(name);
        if (f == null) return null;
        @SuppressWarnings("unchecked")
        List<String> values = (List<String>) payload.getField(f);
        for (int i = 0; i < values.size(); i++) {
            String field = at + name + "[" + i + "]";
            String p =
                    shuffleKeys ? Ids.shuffleKeyProblem(field, values.get(i)) : Ids.nameProblem(field, values.get(i));
            if (p != null) return p;
        }
        return null;
    }
}
