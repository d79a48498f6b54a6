package io.estuary.network.rpc;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.WireFormat;
import io.estuary.common.config.ConfigEntry;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The size limits every control request is held to before any handler sees it: string length, entries per list,
 * and the partition and mapper counts of a shuffle (any field named {@code num_partitions} or
 * {@code num_mappers}, wherever it appears). Works on any protobuf message type by reading its wire format against
 * the type's descriptor, so a field added to the protocol later is covered without code here. Immutable and
 * thread-safe.
 */
public final class RequestLimits {
    /** The defaults of the configuration keys, for handlers built without a configuration (tests). */
    public static final RequestLimits DEFAULTS = from(new EstuaryConf());

    /** Deeper nesting than any request of ours has: a hostile message cannot make the scan recurse without end. */
    private static final int MAX_DEPTH = 32;

    private final int maxStringBytes;
    private final int maxListEntries;
    private final int maxPartitions;
    private final int maxMappers;
    /** Tighter caps on particular lists, set by the server that has to hold what they ask for. */
    private final Map<FieldDescriptor, ListCap> listCaps;

    /** At most {@code max} entries in one list field; {@code why} says where the number comes from. */
    private static final class ListCap {
        final int max;
        final String why;

        ListCap(int max, String why) {
            this.max = max;
            this.why = why;
        }
    }

    private RequestLimits(
            int maxStringBytes,
            int maxListEntries,
            int maxPartitions,
            int maxMappers,
            Map<FieldDescriptor, ListCap> listCaps) {
        this.maxStringBytes = maxStringBytes;
        this.maxListEntries = maxListEntries;
        this.maxPartitions = maxPartitions;
        this.maxMappers = maxMappers;
        this.listCaps = listCaps;
    }

    /**
     * These limits, with the repeated field {@code field} (of any request type) held to at most {@code max} entries
     * (when that is below the list limit), checked on the bytes like every other limit. For a server that builds
     * something large per entry: it derives {@code max} from what it can hold; {@code why} (e.g. "what this worker's
     * heap holds") ends up in the refusal.
     */
    public RequestLimits withListCap(FieldDescriptor field, int max, String why) {
        if (!field.isRepeated()) throw new IllegalArgumentException(field.getFullName() + " is not a list");
        Map<FieldDescriptor, ListCap> caps = new java.util.HashMap<>(listCaps);
        caps.put(field, new ListCap(max, why));
        return new RequestLimits(
                maxStringBytes, maxListEntries, maxPartitions, maxMappers, java.util.Collections.unmodifiableMap(caps));
    }

    public static RequestLimits from(EstuaryConf conf) {
        return new RequestLimits(
                conf.get(NetworkConfig.MAX_STRING_BYTES),
                conf.get(NetworkConfig.MAX_LIST_ENTRIES),
                conf.get(NetworkConfig.MAX_PARTITIONS),
                conf.get(NetworkConfig.MAX_MAPPERS),
                java.util.Collections.emptyMap());
    }

    public int maxStringBytes() {
        return maxStringBytes;
    }

    /**
     * What in the serialized message {@code bytes} (of type {@code type}) is over a limit, as a sentence naming the
     * field, its size, the limit and its configuration key; null when nothing is. Reads the wire format itself, before
     * anything is built from it: a request is refused before its strings and lists take memory, and checking costs a
     * fraction of parsing. Malformed bytes throw.
     */
    public String check(ByteBuffer bytes, Descriptor type) throws IOException {
        return scan(CodedInputStream.newInstance(bytes), type, null, 0);
    }

    /** Checks a message already built (tests, tools). */
    public String check(Message message) {
        try {
            return check(ByteBuffer.wrap(message.toByteArray()), message.getDescriptorForType());
        } catch (IOException e) {
            throw new IllegalStateException("a built message does not parse", e);
        }
    }

    /** Where a field sits in the message, rendered only for the message of a refusal. */
    private static final class Path {
        final Path parent;
        final FieldDescriptor field;
        final int index; // in its list, or -1

        Path(Path parent, FieldDescriptor field, int index) {
            this.parent = parent;
            this.field = field;
            this.index = index;
        }

        static String of(Path parent, FieldDescriptor field, int index) {
            StringBuilder b = new StringBuilder();
            new Path(parent, field, index).appendTo(b);
            return b.toString();
        }

        private void appendTo(StringBuilder b) {
            if (parent != null) {
                parent.appendTo(b);
                b.append('.');
            }
            b.append(field.getName());
            if (index >= 0) b.append('[').append(index).append(']');
        }
    }

    /** Each message type's fields by number, so the scan does no lookups that allocate. */
    private static final Map<Descriptor, FieldDescriptor[]> FIELDS = new ConcurrentHashMap<>();

    private static FieldDescriptor[] fieldsByNumber(Descriptor type) {
        FieldDescriptor[] byNumber = FIELDS.get(type);
        if (byNumber != null) return byNumber;
        int max = 0;
        for (FieldDescriptor f : type.getFields()) max = Math.max(max, f.getNumber());
        byNumber = new FieldDescriptor[max + 1];
        for (FieldDescriptor f : type.getFields()) byNumber[f.getNumber()] = f;
        FIELDS.put(type, byNumber);
        return byNumber;
    }

    private String scan(CodedInputStream in, Descriptor type, Path path, int depth) throws IOException {
        if (depth > MAX_DEPTH) throw new InvalidProtocolBufferException("a request nested deeper than " + MAX_DEPTH);
        FieldDescriptor[] fields = fieldsByNumber(type);
        int[] entries = null; // per field index, only for messages with repeated fields set
        while (!in.isAtEnd()) {
            int tag = in.readTag();
            int number = WireFormat.getTagFieldNumber(tag);
            FieldDescriptor f = number < fields.length ? fields[number] : null;
            if (f == null) { // a field of a newer peer: not ours to judge
                in.skipField(tag);
                continue;
            }
            int wireType = WireFormat.getTagWireType(tag);
            int index = -1;
            if (f.isRepeated()) {
                boolean packed = wireType == WireFormat.WIRETYPE_LENGTH_DELIMITED && !isLengthDelimited(f);
                if (entries == null) entries = new int[type.getFields().size()];
                index = entries[f.getIndex()];
                entries[f.getIndex()] += packed ? packedCount(in) : 1;
                if (entries[f.getIndex()] > maxListEntries) {
                    return over(
                            Path.of(path, f, -1) + " has too many entries",
                            NetworkConfig.MAX_LIST_ENTRIES,
                            maxListEntries);
                }
                ListCap cap = listCaps.isEmpty() ? null : listCaps.get(f);
                if (cap != null && entries[f.getIndex()] > cap.max) {
                    return Path.of(path, f, -1) + " has more than " + cap.max + " entries: " + cap.why;
                }
                if (packed) continue; // counted and consumed
            }
            String err = value(in, f, tag, wireType, path, index, depth);
            if (err != null) return err;
        }
        return null;
    }

    private static boolean isLengthDelimited(FieldDescriptor f) {
        FieldDescriptor.JavaType t = f.getJavaType();
        return t == FieldDescriptor.JavaType.STRING
                || t == FieldDescriptor.JavaType.MESSAGE
                || t == FieldDescriptor.JavaType.BYTE_STRING;
    }

    private String value(CodedInputStream in, FieldDescriptor f, int tag, int wireType, Path path, int index, int depth)
            throws IOException {
        switch (f.getJavaType()) {
            case STRING: {
                int bytes = in.readRawVarint32();
                if (bytes > maxStringBytes) {
                    return over(
                            Path.of(path, f, index) + " is a string of " + bytes + " bytes",
                            NetworkConfig.MAX_STRING_BYTES,
                            maxStringBytes);
                }
                in.skipRawBytes(bytes);
                return null;
            }
            case MESSAGE: {
                int length = in.readRawVarint32();
                int outer = in.pushLimit(length);
                String err = scan(in, f.getMessageType(), new Path(path, f, index), depth + 1);
                if (err != null) return err;
                in.popLimit(outer);
                return null;
            }
            case INT: {
                if (wireType != WireFormat.WIRETYPE_VARINT) {
                    in.skipField(tag);
                    return null;
                }
                int n = in.readInt32();
                if (n > maxPartitions && f.getName().equals("num_partitions")) {
                    return over(Path.of(path, f, index) + " is " + n, NetworkConfig.MAX_PARTITIONS, maxPartitions);
                }
                if (n > maxMappers && f.getName().equals("num_mappers")) {
                    return over(Path.of(path, f, index) + " is " + n, NetworkConfig.MAX_MAPPERS, maxMappers);
                }
                return null;
            }
            default:
                in.skipField(tag);
                return null;
        }
    }

    /** Consumes a packed run of scalars and returns how many it holds. */
    private static int packedCount(CodedInputStream in) throws IOException {
        int length = in.readRawVarint32();
        int outer = in.pushLimit(length);
        int n = 0;
        while (!in.isAtEnd()) {
            in.readRawVarint64();
            n++;
        }
        in.popLimit(outer);
        return n;
    }

    private static String over(String what, ConfigEntry<?> key, int limit) {
        return what + ", more than " + key.key() + " (" + limit + ") allows";
    }
}
