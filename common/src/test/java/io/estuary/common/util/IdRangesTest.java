package io.estuary.common.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class IdRangesTest {
    @Test
    void consecutiveIdsBecomeRangesAndTheCountIsGiven() {
        assertEquals("[]", IdRanges.describe(Collections.emptyList()));
        assertEquals("[5]", IdRanges.describe(Collections.singletonList(5)));
        assertEquals("[3-7, 9, 12-13] (8 ids)", IdRanges.describe(Arrays.asList(13, 3, 4, 5, 6, 7, 9, 12, 9)));
        assertEquals("[0-2] (3 ids)", IdRanges.describe(2, 0, 1, 1));
    }

    @Test
    void aWideSetStaysOneShortLine() {
        List<Integer> ids = new ArrayList<>();
        for (int p = 10553; p < 15850; p++) ids.add(p);
        assertEquals("[10553-15849] (5297 ids)", IdRanges.describe(ids));
        List<Integer> scattered = new ArrayList<>();
        for (int p = 0; p < 20_000; p += 2) scattered.add(p);
        String s = IdRanges.describe(scattered);
        assertTrue(s.length() < 80, s);
        assertEquals("[0, 2, 4, 6, 8, 10, 12, 14, ...] (10000 ids)", s);
    }
}
