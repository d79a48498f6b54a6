package io.estuary.worker.push;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Bytes pushed over a sliding window of one-second buckets. Recording is lock-free (one bucket per second,
 * reset by the first push that finds it stale); a push racing with a reset may be lost from the window, which only
 * makes a rate a little low for one second. Thread-safe.
 */
final class PushRateWindow {
    private final int seconds;
    private final AtomicLongArray bytes;
    private final AtomicLongArray bucketSecond;

    PushRateWindow(int seconds) {
        this.seconds = seconds;
        this.bytes = new AtomicLongArray(seconds);
        this.bucketSecond = new AtomicLongArray(seconds);
    }

    void record(long n, long nowMs) {
        long sec = nowMs / 1000;
        int i = (int) (sec % seconds);
        long was = bucketSecond.get(i);
        if (was != sec && bucketSecond.compareAndSet(i, was, sec)) bytes.set(i, 0);
        bytes.addAndGet(i, n);
    }

    /** Bytes per second over the window ending now. */
    long rate(long nowMs) {
        long sec = nowMs / 1000;
        long sum = 0;
        for (int i = 0; i < seconds; i++) {
            long s = bucketSecond.get(i);
            if (s > sec - seconds && s <= sec) sum += bytes.get(i);
        }
        return sum / seconds;
    }
}
