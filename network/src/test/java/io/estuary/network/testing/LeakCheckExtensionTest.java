package io.estuary.network.testing;

import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The leak check itself: the detector is the recording one, and a buffer dropped unreleased is found. */
class LeakCheckExtensionTest {
    @Test
    void aBufferCollectedUnreleasedIsRecorded() throws Exception {
        assertNull(RecordingLeakDetector.notInstalledReason());
        assertEquals(io.netty.util.ResourceLeakDetector.Level.PARANOID, io.netty.util.ResourceLeakDetector.getLevel());
        RecordingLeakDetector.drain();
        leakOne();
        List<String> leaks = null;
        for (int i = 0; i < 10 && (leaks == null || leaks.isEmpty()); i++) {
            LeakCheckExtension.collectGarbage();
            leaks = RecordingLeakDetector.drain(); // taken here, so this class itself passes the check
        }
        assertEquals(1, leaks.size(), String.valueOf(leaks));
        assertTrue(leaks.get(0).contains("leakOne"), "the record says where the buffer was used: " + leaks.get(0));
    }

    private static void leakOne() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeLong(42); // recorded access
    }
}
