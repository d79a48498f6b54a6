package io.estuary.common.util;

/** The name of one shuffle of one application, as workers and masters key their state: {@code appId-shuffleId}. */
public final class ShuffleKey {
    private ShuffleKey() {}

    public static String of(String appId, int shuffleId) {
        return appId + "-" + shuffleId;
    }

    public static String appId(String shuffleKey) {
        int i = shuffleKey.lastIndexOf('-');
        if (i <= 0) throw new IllegalArgumentException("not a shuffle key: " + shuffleKey);
        return shuffleKey.substring(0, i);
    }

    public static int shuffleId(String shuffleKey) {
        int i = shuffleKey.lastIndexOf('-');
        if (i <= 0) throw new IllegalArgumentException("not a shuffle key: " + shuffleKey);
        return Integer.parseInt(shuffleKey.substring(i + 1));
    }
}
