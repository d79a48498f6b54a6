package io.estuary.network.rpc;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.estuary.common.config.ConfigEntry;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The size limits every control request is held to before any handler sees it: string length, entries per list,
 * and the partition and mapper counts of a shuffle (any field named {@code num_partitions} or
 * {@code num_mappers}, wherever it appears). Works on any protobuf message by walking its set fields, so a field
 * added to the protocol later is covered without code here. Immutable and thread-safe.
 */
public final class RequestLimits {
  /** The defaults of the configuration keys, for handlers built without a configuration (tests). */
  public static final RequestLimits DEFAULTS = from(new EstuaryConf());

  private final int maxStringBytes;
  private final int maxListEntries;
  private final int maxPartitions;
  private final int maxMappers;

  private RequestLimits(int maxStringBytes, int maxListEntries, int maxPartitions, int maxMappers) {
    this.maxStringBytes = maxStringBytes;
    this.maxListEntries = maxListEntries;
    this.maxPartitions = maxPartitions;
    this.maxMappers = maxMappers;
  }

  public static RequestLimits from(EstuaryConf conf) {
    return new RequestLimits(conf.get(NetworkConfig.MAX_STRING_BYTES), conf.get(NetworkConfig.MAX_LIST_ENTRIES),
        conf.get(NetworkConfig.MAX_PARTITIONS), conf.get(NetworkConfig.MAX_MAPPERS));
  }

  public int maxStringBytes() {
    return maxStringBytes;
  }

  /**
   * What in {@code request} is over a limit, as a sentence naming the field, its size, the limit and its
   * configuration key; null when nothing is.
   */
  public String check(Message request) {
    return walk(request, "");
  }

  private String walk(Message m, String path) {
    for (Map.Entry<FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
      FieldDescriptor f = e.getKey();
      String name = path + f.getName();
      if (f.isRepeated()) {
        List<?> list = (List<?>) e.getValue();
        if (list.size() > maxListEntries) {
          return over(name + " has " + list.size() + " entries", NetworkConfig.MAX_LIST_ENTRIES, maxListEntries);
        }
        for (int i = 0; i < list.size(); i++) {
          String err = value(f, list.get(i), name + "[" + i + "]");
          if (err != null) return err;
        }
      } else {
        String err = value(f, e.getValue(), name);
        if (err != null) return err;
      }
    }
    return null;
  }

  private String value(FieldDescriptor f, Object v, String name) {
    switch (f.getJavaType()) {
      case STRING: {
        String s = (String) v;
        // A UTF-8 byte count is at most 3 per char: only strings that might be too long get counted.
        if (s.length() * 3L <= maxStringBytes) return null;
        int bytes = s.getBytes(StandardCharsets.UTF_8).length;
        return bytes <= maxStringBytes ? null
            : over(name + " is a string of " + bytes + " bytes", NetworkConfig.MAX_STRING_BYTES, maxStringBytes);
      }
      case MESSAGE:
        return walk((Message) v, name + ".");
      case INT: {
        int n = (Integer) v;
        if (f.getName().equals("num_partitions") && n > maxPartitions) {
          return over(name + " is " + n, NetworkConfig.MAX_PARTITIONS, maxPartitions);
        }
        if (f.getName().equals("num_mappers") && n > maxMappers) {
          return over(name + " is " + n, NetworkConfig.MAX_MAPPERS, maxMappers);
        }
        return null;
      }
      default:
        return null;
    }
  }

  private static String over(String what, ConfigEntry<?> key, int limit) {
    return what + ", more than " + key.key() + " (" + limit + ") allows";
  }
}
