package io.estuary.common.time;

/** {@link Clock} backed by {@link System#currentTimeMillis()} and {@link System#nanoTime()}. Stateless. */
final class SystemClock implements Clock {
    static final SystemClock INSTANCE = new SystemClock();

    private SystemClock() {}

    @Override
    public long millis() {
        return System.currentTimeMillis();
    }

    @Override
    public long nanos() {
        return System.nanoTime();
    }
}
