package io.estuary.common.util;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** Which errors halt a server process, and that nothing halts until a server's main turns it on. */
class FatalErrorsTest {

    /** Stands for Netty's io.netty.util.internal.OutOfDirectMemoryError (this module has no Netty). */
    static final class OutOfDirectMemoryError extends OutOfMemoryError {
        OutOfDirectMemoryError() {
            super("failed to allocate 16777216 byte(s) of direct memory");
        }
    }

    @Test
    void vmErrorsAreFatalButRefusedDirectAllocationsAreNot() {
        assertTrue(FatalErrors.isFatal(new OutOfMemoryError("Java heap space")));
        assertTrue(FatalErrors.isFatal(new StackOverflowError()));
        assertTrue(FatalErrors.isFatal(new RuntimeException("wrapped", new InternalError("boom"))));
        assertFalse(FatalErrors.isFatal(new OutOfDirectMemoryError()));
        assertFalse(FatalErrors.isFatal(new OutOfMemoryError("Direct buffer memory")));
        assertFalse(FatalErrors.isFatal(new IllegalStateException("not fatal")));
        assertFalse(FatalErrors.isFatal(new AssertionError("an Error, but not the VM's")));
    }

    @Test
    void embeddedServersNeverHaltTheirHost() {
        assertFalse(FatalErrors.halting(), "only Master.main and Worker.main turn halting on");
        FatalErrors.check(new OutOfMemoryError("Java heap space")); // returns: this test JVM lives on
        Thread t = new NamedThreadFactory("fatal-test").newThread(() -> {
            throw new OutOfMemoryError("Java heap space");
        });
        assertSame(FatalErrors.UNCAUGHT, t.getUncaughtExceptionHandler());
    }
}
