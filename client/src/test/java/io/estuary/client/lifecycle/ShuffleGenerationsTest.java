package io.estuary.client.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class ShuffleGenerationsTest {
  @Test
  void stageAttemptsDecideByDefault() {
    ShuffleGenerations g = new ShuffleGenerations();
    ShuffleState first = g.forWriter(7, 0, false, 2, 3);
    assertSame(first, g.forWriter(7, 1, false, 2, 3)); // determinate rerun of a readable generation
    first.markLost();
    assertSame(first, g.forWriter(7, 0, false, 2, 3)); // a straggler of the lost attempt
    ShuffleState second = g.forWriter(7, 1, false, 2, 3);
    assertNotSame(first, second);
    assertSame(second, g.newest(7));
  }

  @Test
  void anyWriterReplacesALostGenerationWhenAsked() {
    ShuffleGenerations g = new ShuffleGenerations();
    g.replaceLostOnAnyWriter();
    ShuffleState first = g.forWriter(0, 0, false, 2, 2);
    assertSame(first, g.forWriter(0, 1, false, 2, 2));
    first.markLost();
    ShuffleState second = g.forWriter(0, 0, false, 2, 2);
    assertNotSame(first, second);
    assertSame(second, g.forWriter(0, 3, false, 2, 2)); // later reruns join it while it is readable
    assertSame(second, g.newest(0));
    assertEquals(second, g.byId(second.shuffleId));
  }
}
