package io.estuary.server.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/**
 * The JSON of the admin endpoints ({@link AdminViews}), written and read with Jackson. Reading ignores unknown
 * keys (a newer server may add some) and fails with {@link IllegalArgumentException} on text that is not JSON or
 * does not fit the view. Thread-safe (a configured {@link ObjectMapper} is).
 */
public final class AdminJson {
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false);

    private AdminJson() {}

    /** One line of JSON. */
    public static String write(Object view) {
        try {
            return MAPPER.writeValueAsString(view);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "cannot write " + view.getClass().getName() + " as JSON: " + e.getMessage(), e);
        }
    }

    /** Indented, for people ({@code estuary --json}). */
    public static String writePretty(Object view) {
        try {
            return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(view);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "cannot write " + view.getClass().getName() + " as JSON: " + e.getMessage(), e);
        }
    }

    public static <T> T read(String json, Class<T> view) {
        try {
            return MAPPER.readValue(json, view);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a " + view.getSimpleName() + ": " + e.getOriginalMessage(), e);
        }
    }

    /** Any JSON document as a tree (e.g. a dashboard file, or an answer whose kind is not known yet). */
    public static JsonNode tree(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** A tree read before as a view. */
    public static <T> T convert(JsonNode tree, Class<T> view) {
        try {
            return MAPPER.treeToValue(tree, view);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new IllegalArgumentException("not a " + view.getSimpleName() + ": " + e.getMessage(), e);
        }
    }
}
