package io.estuary.tests;

import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class whose JVM runs a shaded client jar (Spark in the test JVM, as in the legacy Spark modules) and
 * leaked a buffer of the relocated Netty: {@code LeakCheckExtension}'s counterpart for
 * {@code io.estuary.shaded.io.netty}. Use with {@code @ExtendWith}; installs {@link ShadedLeakDetector} when loaded.
 */
public final class ShadedLeakCheckExtension implements BeforeAllCallback, AfterAllCallback {
    static {
        ShadedLeakDetector.install();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        String why = ShadedLeakDetector.notInstalledReason();
        if (why != null) throw new IllegalStateException("leak detection is not working: " + why);
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        List<String> leaks = ShadedLeakDetector.collectLeaks();
        if (leaks.isEmpty()) return;
        throw new AssertionError(leaks.size() + " buffer leak(s) of the shaded client's Netty found after "
                + context.getDisplayName() + " (paranoid leak detection); the first:\n" + leaks.get(0));
    }
}
