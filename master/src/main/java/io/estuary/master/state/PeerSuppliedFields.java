package io.estuary.master.state;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import java.util.List;
import java.util.Map;

/**
 * Drops the fields this release does not know from a command the master builds, before it is logged. Such fields can
 * only come from a message a peer sent (a worker of a newer release registering its {@code WorkerInfo}), since this
 * master writes only fields it knows. Logging them would make every master of this release refuse the command as
 * unappliable ({@link CommandFormats#check}); dropping them here, before the log, keeps every master's state the
 * same: they all apply the known fields. A newer release sends a new field only to peers whose agreed protocol
 * version has it (docs/upgrading.md), so what is dropped is never something this release was meant to act on.
 * Stateless; safe from any thread.
 */
public final class PeerSuppliedFields {
    private PeerSuppliedFields() {}

    /** {@code m} without unknown fields, at any depth; {@code m} itself when it has none. */
    @SuppressWarnings("unchecked")
    public static <M extends Message> M withoutUnknown(M m) {
        if (!hasUnknown(m)) return m;
        Message.Builder b = m.toBuilder();
        b.setUnknownFields(UnknownFieldSet.getDefaultInstance());
        for (Map.Entry<FieldDescriptor, Object> f : m.getAllFields().entrySet()) {
            if (f.getKey().getJavaType() != FieldDescriptor.JavaType.MESSAGE) continue;
            if (f.getKey().isRepeated()) {
                b.clearField(f.getKey());
                for (Object item : (List<?>) f.getValue())
                    b.addRepeatedField(f.getKey(), withoutUnknown((Message) item));
            } else {
                b.setField(f.getKey(), withoutUnknown((Message) f.getValue()));
            }
        }
        return (M) b.build();
    }

    private static boolean hasUnknown(Message m) {
        if (!m.getUnknownFields().asMap().isEmpty()) return true;
        for (Map.Entry<FieldDescriptor, Object> f : m.getAllFields().entrySet()) {
            if (f.getKey().getJavaType() != FieldDescriptor.JavaType.MESSAGE) continue;
            if (f.getKey().isRepeated()) {
                for (Object item : (List<?>) f.getValue()) if (hasUnknown((Message) item)) return true;
            } else if (hasUnknown((Message) f.getValue())) {
                return true;
            }
        }
        return false;
    }
}
