package io.estuary.client.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import org.junit.jupiter.api.Test;

class ShuffleGenerationsTest {
    @Test
    void stageAttemptsDecideByDefault() {
        ShuffleGenerations g = new ShuffleGenerations();
        ShuffleState first = g.forWriter(7, 2, 0, false, 2, 3);
        assertSame(first, g.forWriter(7, 2, 1, false, 2, 3)); // determinate rerun of a readable generation
        assertSame(first, g.forWriter(7, 2, 0, false, 2, 3)); // attempt 0 still writes the generation it created
        first.markLost();
        assertSame(first, g.forWriter(7, 2, 0, false, 2, 3)); // a straggler of the lost attempt
        ShuffleState second = g.forWriter(7, 2, 1, false, 2, 3);
        assertNotSame(first, second);
        assertSame(second, g.newest(7));
    }

    @Test
    void anyWriterReplacesALostGenerationWhenAsked() {
        ShuffleGenerations g = new ShuffleGenerations();
        g.replaceLostOnAnyWriter();
        ShuffleState first = g.forWriter(0, 0, 0, false, 2, 2);
        assertSame(first, g.forWriter(0, 0, 1, false, 2, 2));
        first.markLost();
        ShuffleState second = g.forWriter(0, 0, 0, false, 2, 2);
        assertNotSame(first, second);
        assertSame(second, g.forWriter(0, 0, 3, false, 2, 2)); // later reruns join it while it is readable
        assertSame(second, g.newest(0));
        assertEquals(second, g.byId(second.shuffleId));
    }

    @Test
    void aStragglerOfAnOlderAttemptNeverJoinsTheRerunsGeneration() {
        ShuffleGenerations g = new ShuffleGenerations();
        ShuffleState first = g.forWriter(4, 3, 0, true, 2, 2);
        ShuffleState rerun = g.forWriter(4, 3, 1, true, 2, 2); // an indeterminate stage reruns: a fresh generation
        assertNotSame(first, rerun);
        StatusException e = assertThrows(StatusException.class, () -> g.forWriter(4, 3, 0, true, 2, 2));
        assertEquals(StatusCode.STALE_ATTEMPT, e.status());
        assertSame(rerun, g.newest(4)); // the refusal creates nothing
        assertSame(rerun, g.forWriter(4, 3, 1, true, 2, 2));
    }

    @Test
    void aStragglerIsRefusedAfterALostDeterminateGenerationWasReplaced() {
        ShuffleGenerations g = new ShuffleGenerations();
        g.forWriter(5, 1, 0, false, 2, 2).markLost();
        ShuffleState rerun = g.forWriter(5, 1, 1, false, 2, 2);
        assertEquals(
                StatusCode.STALE_ATTEMPT,
                assertThrows(StatusException.class, () -> g.forWriter(5, 1, 0, false, 2, 2))
                        .status());
        assertSame(rerun, g.newest(5));
    }

    /** A straggler that took its generation before the loss cannot end a map in it once a rerun replaced it. */
    @Test
    void aStragglerCannotEndAMapInASupersededGeneration() {
        ShuffleGenerations g = new ShuffleGenerations();
        ShuffleState lost = g.forWriter(7, 2, 0, false, 2, 2);
        g.checkNotSuperseded(lost, 2, 0); // still the newest: fine
        lost.markLost();
        ShuffleState rerun = g.forWriter(7, 2, 1, false, 2, 2);
        assertEquals(
                StatusCode.STALE_ATTEMPT,
                assertThrows(StatusException.class, () -> g.checkNotSuperseded(lost, 2, 0))
                        .status());
        g.checkNotSuperseded(rerun, 2, 0); // in the newest generation a determinate straggler's output is as good
    }

    @Test
    void aLaterStageOfTheSameShuffleIsNewerWhateverItsAttempt() {
        ShuffleGenerations g = new ShuffleGenerations();
        g.forWriter(6, 3, 0, false, 2, 2).markLost();
        ShuffleState second = g.forWriter(6, 3, 1, false, 2, 2);
        second.markLost();
        // A new job's stage for the same shuffle starts its attempts at 0 again.
        ShuffleState third = g.forWriter(6, 9, 0, false, 2, 2);
        assertNotSame(second, third);
        assertSame(third, g.forWriter(6, 9, 0, false, 2, 2));
        // A straggler of the earlier stage, whatever its attempt, is older.
        assertEquals(
                StatusCode.STALE_ATTEMPT,
                assertThrows(StatusException.class, () -> g.forWriter(6, 3, 1, false, 2, 2))
                        .status());
    }
}
