package org.apache.spark.shuffle.estuary;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.apache.spark.TaskContext;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/**
 * Creates the {@link ExternalSorter} that sorts a reducer's records by key, on every Spark this source runs on.
 * Spark 4.1 gave its constructor a sixth argument (row checksums, with a Scala default), so a call compiled against
 * 3.x or 4.0 does not link on 4.1. The constructor, and the default of any argument past the fifth, are found once,
 * when this class loads. Stateless and thread-safe.
 */
final class ExternalSorters {
    private ExternalSorters() {}

    private static final Constructor<?> CONSTRUCTOR = findConstructor();
    /** The defaults Spark gives the constructor's arguments past the fifth, in order. */
    private static final Method[] EXTRA_DEFAULTS = findExtraDefaults(CONSTRUCTOR.getParameterCount() - 5);

    private static Constructor<?> findConstructor() {
        Class<?>[] known = {TaskContext.class, Option.class, Option.class, Option.class, Serializer.class};
        Constructor<?> found = null;
        for (Constructor<?> c : ExternalSorter.class.getConstructors()) {
            Class<?>[] p = c.getParameterTypes();
            if (p.length < known.length) continue;
            boolean matches = true;
            for (int i = 0; i < known.length; i++) matches &= p[i] == known[i];
            if (matches && (found == null || p.length < found.getParameterCount())) found = c;
        }
        if (found == null) throw new LinkageError("this Spark's ExternalSorter has no constructor Estuary knows");
        return found;
    }

    private static Method[] findExtraDefaults(int extra) {
        Method[] defaults = new Method[extra];
        for (int i = 0; i < extra; i++) {
            // Scala's name for the default of constructor argument n (1-based), a static method of the class.
            String name = "$lessinit$greater$default$" + (6 + i);
            try {
                defaults[i] = ExternalSorter.class.getMethod(name);
            } catch (NoSuchMethodException e) {
                throw new LinkageError("ExternalSorter's constructor argument " + (6 + i) + " has no default", e);
            }
        }
        return defaults;
    }

    /** A sorter without aggregation or partitioning, ordering by {@code ordering}. */
    @SuppressWarnings("unchecked")
    static <K, V> ExternalSorter<K, V, V> create(
            TaskContext context, Option<Ordering<K>> ordering, Serializer serializer) {
        Object[] args = new Object[CONSTRUCTOR.getParameterCount()];
        args[0] = context;
        args[1] = Option.empty();
        args[2] = Option.empty();
        args[3] = ordering;
        args[4] = serializer;
        try {
            for (int i = 0; i < EXTRA_DEFAULTS.length; i++) args[5 + i] = EXTRA_DEFAULTS[i].invoke(null);
            return (ExternalSorter<K, V, V>) CONSTRUCTOR.newInstance(args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) throw (RuntimeException) cause;
            if (cause instanceof Error) throw (Error) cause;
            throw new IllegalStateException(cause);
        } catch (InstantiationException | IllegalAccessException e) {
            throw new IllegalStateException("cannot create Spark's ExternalSorter", e);
        }
    }
}
