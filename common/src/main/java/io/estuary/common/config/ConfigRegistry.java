package io.estuary.common.config;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Every declared {@link ConfigEntry}, by key. */
public final class ConfigRegistry {
  private static final Map<String, ConfigEntry<?>> ENTRIES = new ConcurrentHashMap<>();

  private ConfigRegistry() {}

  static void register(ConfigEntry<?> entry) {
    ConfigEntry<?> old = ENTRIES.putIfAbsent(entry.key(), entry);
    if (old != null && old != entry) {
      throw new IllegalStateException("configuration key declared twice: " + entry.key());
    }
  }

  /** Loads every class that declares entries, so the registry is complete. */
  public static void loadAll() {
    // Touching each class runs its static initialisers, which declare its entries.
    NetworkConfig.touch();
    MasterConfig.touch();
    WorkerConfig.touch();
    ClientConfig.touch();
  }

  public static ConfigEntry<?> get(String key) {
    loadAll();
    return ENTRIES.get(key);
  }

  public static List<ConfigEntry<?>> all() {
    loadAll();
    List<ConfigEntry<?>> list = new ArrayList<>(ENTRIES.values());
    list.sort(Comparator.comparing(ConfigEntry::key));
    return list;
  }
}
