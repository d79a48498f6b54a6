package io.estuary.worker.meta;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.release.Format;
import java.lang.reflect.Field;
import org.junit.jupiter.api.Test;

/** The record format the store writes and the oldest it reads are the ones the release history names. */
class MetadataFormatTest {
    private static int constant(String name) throws Exception {
        Field f = CommittedFileStore.class.getDeclaredField(name);
        f.setAccessible(true);
        return ((Number) f.get(null)).intValue();
    }

    @Test
    void theStoreWritesAndReadsWhatFormatSays() throws Exception {
        assertEquals(
                Format.WORKER_METADATA.version(),
                constant("FORMAT"),
                "a change to CommittedFileRecord's format names its release in io.estuary.common.release.Format");
        assertEquals(Format.WORKER_METADATA.oldestRead(), constant("FORMAT_1"));
    }
}
