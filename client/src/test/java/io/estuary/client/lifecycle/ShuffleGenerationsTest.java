package io.estuary.client.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.status.StatusCode;
import io.estuary.common.status.StatusException;
import java.util.Collections;
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

    @Test
    void aDeclaredGenerationIsClaimedByItsFirstWriterAndHiddenFromReadersUntilThen() {
        ShuffleGenerations g = new ShuffleGenerations();
        ShuffleState declared = g.declare(9, 2, 3);
        assertNull(g.declare(9, 2, 3), "declared once");
        assertNull(g.newest(9), "no reader sees a generation no writer claimed");
        assertSame(declared, g.byId(declared.shuffleId));
        assertFalse(declared.claimed());
        ShuffleState first = g.forWriter(9, 4, 1, true, 2, 3); // whatever the attempt, even an indeterminate one
        assertSame(declared, first);
        assertTrue(first.claimed());
        assertEquals(4, first.stageId);
        assertEquals(1, first.stageAttempt);
        assertSame(first, g.newest(9));
        assertSame(first, g.forWriter(9, 4, 1, true, 2, 3));
        assertNotSame(first, g.forWriter(9, 4, 2, true, 2, 3), "an indeterminate rerun still starts afresh");
        assertEquals(
                StatusCode.STALE_ATTEMPT,
                assertThrows(StatusException.class, () -> g.forWriter(9, 4, 0, true, 2, 3))
                        .status());
        assertNull(g.declare(9, 2, 3), "a shuffle with generations is not declared again");
    }

    @Test
    void aWriterNamingAnotherShapeThanTheDeclaredOneIsRefusedClearly() {
        ShuffleGenerations g = new ShuffleGenerations();
        ShuffleState declared = g.declare(1, 2, 3);
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> g.forWriter(1, 0, 0, false, 2, 4));
        assertTrue(e.getMessage().contains("declared with 2 maps and 3 partitions"), e.getMessage());
        assertFalse(declared.claimed(), "the refusal claims nothing");
        assertThrows(IllegalArgumentException.class, () -> g.forWriter(1, -1, 0, false, 2, 3));
        assertSame(declared, g.forWriter(1, 0, 0, false, 2, 3));
    }

    @Test
    void forgettingAShuffleReturnsItsDeclaredGenerationToo() {
        ShuffleGenerations g = new ShuffleGenerations();
        ShuffleState declared = g.declare(3, 1, 1);
        assertEquals(Collections.singletonList(declared), g.remove(3));
        assertNull(g.byId(declared.shuffleId));
    }
}
