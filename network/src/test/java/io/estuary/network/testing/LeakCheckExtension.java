package io.estuary.network.testing;

import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class that leaked a Netty buffer. Registered for every test class of every module that has the
 * network test-jar on its test class path (JUnit's extension autodetection, enabled in the root pom): after each
 * class it forces a garbage collection and a few allocations, so Netty reports buffers that became unreachable
 * unreleased, and fails the class naming the first leak's access records. A leak that shows up late (a server
 * thread still closing) fails the class that runs next; the record says where the buffer came from.
 */
public final class LeakCheckExtension implements BeforeAllCallback, AfterAllCallback {
    static {
        RecordingLeakDetector.install();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        String why = RecordingLeakDetector.notInstalledReason();
        if (why != null) throw new IllegalStateException("leak detection is not working: " + why);
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        collectGarbage();
        List<String> leaks = RecordingLeakDetector.drain();
        if (leaks.isEmpty()) return;
        StringBuilder msg = new StringBuilder()
                .append(leaks.size())
                .append(" Netty buffer leak(s) found after ")
                .append(context.getDisplayName())
                .append(" (paranoid leak detection); the first:\n")
                .append(leaks.get(0));
        throw new AssertionError(msg.toString());
    }

    /**
     * The leaks found so far (after a garbage collection), taken from the record so the class-level check does not
     * report them again: for a test that asserts, in the test itself, that a path releases what it took.
     */
    public static List<String> leaksNow() throws InterruptedException {
        collectGarbage();
        return RecordingLeakDetector.drain();
    }

    /** See {@link LeakSweep}. */
    static void collectGarbage() throws InterruptedException {
        LeakSweep.run();
    }
}
