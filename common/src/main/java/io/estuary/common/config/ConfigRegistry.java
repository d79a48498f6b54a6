package io.estuary.common.config;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Every declared {@link ConfigEntry}, by key, and every {@link ConfigRule}. A key's scope comes from the class that
 * declares it (client keys in {@link ClientConfig}, server keys in {@link MasterConfig} and {@link WorkerConfig},
 * transport keys, which both sides read, in {@link NetworkConfig}); a declaration states a scope only where it
 * differs from its class's. Thread-safe.
 */
public final class ConfigRegistry {
    private static final Map<String, ConfigEntry<?>> ENTRIES = new ConcurrentHashMap<>();
    private static final List<ConfigRule> RULES = new CopyOnWriteArrayList<>();
    private static final Map<Class<?>, ConfigEntry.Scope> DECLARING_CLASSES = new LinkedHashMap<>();

    static {
        DECLARING_CLASSES.put(NetworkConfig.class, ConfigEntry.Scope.BOTH);
        DECLARING_CLASSES.put(MasterConfig.class, ConfigEntry.Scope.SERVER);
        DECLARING_CLASSES.put(WorkerConfig.class, ConfigEntry.Scope.SERVER);
        DECLARING_CLASSES.put(ClientConfig.class, ConfigEntry.Scope.CLIENT);
        DECLARING_CLASSES.put(AuthConfig.class, ConfigEntry.Scope.BOTH);
        DECLARING_CLASSES.put(TlsConfig.class, ConfigEntry.Scope.BOTH);
    }

    private static volatile boolean loaded;

    private ConfigRegistry() {}

    static void register(ConfigEntry<?> entry) {
        ConfigEntry<?> old = ENTRIES.putIfAbsent(entry.key(), entry);
        if (old != null && old != entry) {
            throw new IllegalStateException("configuration key declared twice: " + entry.key());
        }
    }

    static void register(ConfigRule rule) {
        RULES.add(rule);
    }

    /**
     * Loads every class that declares entries, so the registry is complete, and gives each of their entries its
     * class's scope (unless the declaration states one).
     */
    public static void loadAll() {
        if (loaded) return;
        synchronized (ConfigRegistry.class) {
            if (loaded) return;
            for (Map.Entry<Class<?>, ConfigEntry.Scope> c : DECLARING_CLASSES.entrySet()) {
                for (Field f : c.getKey().getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigEntry.class) {
                        try {
                            ConfigEntry<?> entry =
                                    (ConfigEntry<?>) f.get(null); // reading the field initialises its class
                            if (entry != null) entry.declaredIn(c.getValue());
                        } catch (IllegalAccessException e) {
                            throw new IllegalStateException("configuration entries are public: " + f, e);
                        }
                    }
                }
            }
            loaded = true;
        }
    }

    public static ConfigEntry<?> get(String key) {
        loadAll();
        return ENTRIES.get(key);
    }

    /** Every rule between keys, in the order declared (per class). */
    public static List<ConfigRule> rules() {
        loadAll();
        return new ArrayList<>(RULES);
    }

    public static List<ConfigEntry<?>> all() {
        loadAll();
        List<ConfigEntry<?>> list = new ArrayList<>(ENTRIES.values());
        list.sort(Comparator.comparing(ConfigEntry::key));
        return list;
    }
}
