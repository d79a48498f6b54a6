package io.estuary.master.state;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.estuary.common.release.Format;
import io.estuary.master.protocol.MasterCommand;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a master can apply of a logged command, and which Raft log format ({@link Format#RAFT_LOG}) a command needs:
 * the check every master runs before it logs or applies an entry, and the list of fields each format added. Stateless.
 */
public final class CommandFormats {
    private CommandFormats() {}

    /**
     * Throws {@link UnappliableCommandException} when this master cannot apply the command as written: a command it
     * does not know, or any field it does not know (a newer master wrote it, e.g. during a rolling upgrade). Applying
     * such a command as a no-op, or without the unknown part, would make this master's state differ from the others'
     * without anyone noticing.
     */
    public static void check(MasterCommand command) {
        String unknown = unknownPart(command, "command");
        if (unknown != null) {
            throw new UnappliableCommandException("this master cannot apply " + command.getCommandCase() + ": "
                    + unknown + " is unknown to this version (written by a newer master?)");
        }
    }

    /**
     * Fields of {@code MasterCommand} (and the messages in it) added after release 0.1.0, by full name, with the Raft
     * log format ({@link Format#RAFT_LOG}) that added them. A field added to master_log.proto gets an entry here and
     * raises the format: while a master of an older release is in the group, a command using it is refused before it
     * is logged ({@link GroupFormats#checkLoggable}).
     */
    static final Map<String, Integer> ADDED_IN_LOG_FORMAT = addedInLogFormat();

    private static Map<String, Integer> addedInLogFormat() {
        Map<String, Integer> m = new HashMap<>();
        m.put("estuary.ApplicationRegistered.principal", 2);
        m.put("estuary.MasterCommand.application_principal_bound", 2);
        m.put("estuary.MasterCommand.quota_set", 2);
        m.put("estuary.ApplicationPrincipal.high_priority", 2);
        m.put("estuary.MasterCommand.quota_removed", 2);
        m.put("estuary.MasterCommand.worker_tags_changed", 2);
        m.put("estuary.MasterCommand.default_tags_set", 2);
        return Collections.unmodifiableMap(m);
    }

    /** The Raft log format a master needs to apply {@code command} (1: release 0.1.0 applies it). */
    static int logFormatOf(MasterCommand command) {
        return logFormatOf(command, ADDED_IN_LOG_FORMAT);
    }

    static int logFormatOf(Message m, Map<String, Integer> added) {
        int needed = 1;
        for (Map.Entry<FieldDescriptor, Object> f : m.getAllFields().entrySet()) {
            needed = Math.max(needed, added.getOrDefault(f.getKey().getFullName(), 1));
            if (f.getKey().getJavaType() != FieldDescriptor.JavaType.MESSAGE) continue;
            List<?> items = f.getKey().isRepeated() ? (List<?>) f.getValue() : List.of(f.getValue());
            for (Object item : items) needed = Math.max(needed, logFormatOf((Message) item, added));
        }
        return needed;
    }

    private static String unknownPart(Message m, String path) {
        if (!m.getUnknownFields().asMap().isEmpty()) {
            return "field " + m.getUnknownFields().asMap().keySet() + " of " + path;
        }
        if (m instanceof MasterCommand
                && ((MasterCommand) m).getCommandCase() == MasterCommand.CommandCase.COMMAND_NOT_SET) {
            return "the kind of " + path;
        }
        for (Map.Entry<FieldDescriptor, Object> f : m.getAllFields().entrySet()) {
            if (f.getKey().getJavaType() != FieldDescriptor.JavaType.MESSAGE) continue;
            if (f.getKey().isRepeated()) {
                List<?> items = (List<?>) f.getValue();
                for (int i = 0; i < items.size(); i++) {
                    String u = unknownPart(
                            (Message) items.get(i), path + "." + f.getKey().getName() + "[" + i + "]");
                    if (u != null) return u;
                }
            } else {
                String u = unknownPart(
                        (Message) f.getValue(), path + "." + f.getKey().getName());
                if (u != null) return u;
            }
        }
        return null;
    }

    /** A command this master cannot apply as written. Refused before it is logged; fatal when found in the log. */
    public static final class UnappliableCommandException extends io.estuary.common.status.StatusException {
        UnappliableCommandException(String message) {
            super(io.estuary.common.status.StatusCode.FATAL, message);
        }
    }
}
