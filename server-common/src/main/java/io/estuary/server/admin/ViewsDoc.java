package io.estuary.server.admin;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.Comparator;

/**
 * The shapes of the admin views as a Markdown table (docs/rest-api.md, between its {@link #BEGIN} and {@link #END}
 * markers), rendered from the record declarations themselves so the doc cannot drift from the wire. Stateless.
 */
public final class ViewsDoc {
    public static final String BEGIN = "<!-- views:begin (generated from AdminViews and CliViews; do not edit) -->";
    public static final String END = "<!-- views:end -->";

    private ViewsDoc() {}

    /** One row per record nested in each holder (by name): its JSON keys in order, each with its JSON type. */
    public static String render(Class<?>... holders) {
        StringBuilder sb = new StringBuilder(BEGIN).append("\n\n| View | JSON |\n|---|---|\n");
        for (Class<?> holder : holders) {
            Class<?>[] views = holder.getDeclaredClasses();
            Arrays.sort(views, Comparator.comparing(Class::getSimpleName));
            for (Class<?> v : views) {
                if (!v.isRecord()) continue;
                StringBuilder fields = new StringBuilder();
                for (RecordComponent c : v.getRecordComponents()) {
                    if (fields.length() > 0) fields.append(", ");
                    fields.append('`').append(c.getName()).append("`: ").append(type(c.getGenericType()));
                }
                sb.append("| `")
                        .append(holder.getSimpleName())
                        .append('.')
                        .append(v.getSimpleName())
                        .append("` | {")
                        .append(fields)
                        .append("} |\n");
            }
        }
        return sb.append('\n').append(END).toString();
    }

    private static String type(Type t) {
        if (t instanceof ParameterizedType p) {
            Type raw = p.getRawType();
            Type[] args = p.getActualTypeArguments();
            if (raw == java.util.List.class) return "[" + type(args[0]) + "]";
            // A map's values are boxed only because Java maps need objects: they are never null.
            if (raw == java.util.Map.class) return "{string: " + type(args[1]).replace(" or null", "") + "}";
            return raw.getTypeName();
        }
        Class<?> c = (Class<?>) t;
        if (c == String.class) return "string";
        if (c == boolean.class || c == Boolean.class) return "boolean";
        if (c == int.class || c == long.class || c == Integer.class || c == Long.class) {
            return c.isPrimitive() ? "number" : "number or null";
        }
        return c.isRecord() ? c.getSimpleName() : c.getName();
    }
}
