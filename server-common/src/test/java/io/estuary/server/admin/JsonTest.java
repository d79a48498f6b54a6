package io.estuary.server.admin;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
  @Test
  void whatIsWrittenParsesBack() {
    Map<String, Object> v = Json.map("s", "a \"quoted\"\\ line\n\ttab \u0001", "n", 42L, "d", 1.5, "t", true,
        "f", false, "z", null, "l", Arrays.asList(1L, "x", Json.map()), "e", Arrays.asList());
    String text = Json.write(v);
    assertEquals(v, Json.parse(text));
    assertEquals(v, Json.parse(" \n" + text.replace(",", " , ").replace(":", " : ") + " "));
    assertEquals(-3L, Json.parse("-3"));
    assertEquals(1e-3, Json.parse("1E-3"));
    assertEquals("é/", Json.parse("\"\\u00e9\\/\""));
  }

  @Test
  void badTextIsRefusedWithWhere() {
    for (String bad : new String[] {"", "{", "{\"a\" 1}", "[1,]", "\"open", "tru", "1 2", "{1:2}"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Json.parse(bad), bad);
      assertTrue(e.getMessage().startsWith("bad JSON at offset "), e.getMessage());
    }
  }
}
