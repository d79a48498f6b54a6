package io.estuary.server.admin;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON for the admin endpoints: writes maps, collections, strings, numbers and booleans, and parses the same back
 * (objects become {@link LinkedHashMap}s, arrays {@link ArrayList}s, numbers {@link Long} when integral else
 * {@link Double}) so that tests and tools read answers as data instead of matching substrings. Stateless.
 */
public final class Json {
  private Json() {}

  public static String write(Object v) {
    StringBuilder sb = new StringBuilder();
    write(sb, v);
    return sb.toString();
  }

  /** A map of alternating keys and values, in order: the usual way to build an answer. */
  public static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put(String.valueOf(kv[i]), kv[i + 1]);
    return m;
  }

  private static void write(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!first) sb.append(',');
        first = false;
        string(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof Collection) {
      sb.append('[');
      boolean first = true;
      for (Object o : (Collection<?>) v) {
        if (!first) sb.append(',');
        first = false;
        write(sb, o);
      }
      sb.append(']');
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else {
      string(sb, v.toString());
    }
  }

  private static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': sb.append("\\\""); break;
        case '\\': sb.append("\\\\"); break;
        case '\n': sb.append("\\n"); break;
        case '\r': sb.append("\\r"); break;
        case '\t': sb.append("\\t"); break;
        default:
          if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
          else sb.append(c);
      }
    }
    sb.append('"');
  }

  /** Parses one JSON value; throws {@link IllegalArgumentException} naming the offset of the first error. */
  public static Object parse(String text) {
    Parser p = new Parser(text);
    Object v = p.value();
    p.skipSpace();
    if (p.pos != text.length()) throw p.error("trailing characters");
    return v;
  }

  /** Recursive descent over the text; one instance per parse. */
  private static final class Parser {
    private final String s;
    private int pos;

    Parser(String s) {
      this.s = s;
    }

    Object value() {
      skipSpace();
      if (pos >= s.length()) throw error("unexpected end");
      char c = s.charAt(pos);
      switch (c) {
        case '{': return object();
        case '[': return array();
        case '"': return string();
        case 't': return literal("true", Boolean.TRUE);
        case 'f': return literal("false", Boolean.FALSE);
        case 'n': return literal("null", null);
        default: return number();
      }
    }

    private Map<String, Object> object() {
      Map<String, Object> m = new LinkedHashMap<>();
      pos++;
      skipSpace();
      if (peek() == '}') {
        pos++;
        return m;
      }
      while (true) {
        skipSpace();
        if (peek() != '"') throw error("expected a key");
        String key = string();
        skipSpace();
        expect(':');
        m.put(key, value());
        skipSpace();
        if (peek() == ',') {
          pos++;
        } else {
          expect('}');
          return m;
        }
      }
    }

    private List<Object> array() {
      List<Object> l = new ArrayList<>();
      pos++;
      skipSpace();
      if (peek() == ']') {
        pos++;
        return l;
      }
      while (true) {
        l.add(value());
        skipSpace();
        if (peek() == ',') {
          pos++;
        } else {
          expect(']');
          return l;
        }
      }
    }

    private String string() {
      StringBuilder sb = new StringBuilder();
      pos++;
      while (true) {
        if (pos >= s.length()) throw error("unterminated string");
        char c = s.charAt(pos++);
        if (c == '"') return sb.toString();
        if (c != '\\') {
          sb.append(c);
          continue;
        }
        if (pos >= s.length()) throw error("unterminated escape");
        char e = s.charAt(pos++);
        switch (e) {
          case 'n': sb.append('\n'); break;
          case 'r': sb.append('\r'); break;
          case 't': sb.append('\t'); break;
          case 'b': sb.append('\b'); break;
          case 'f': sb.append('\f'); break;
          case 'u':
            if (pos + 4 > s.length()) throw error("short \\u escape");
            sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            pos += 4;
            break;
          default: sb.append(e); // \" \\ \/
        }
      }
    }

    private Object number() {
      int start = pos;
      while (pos < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos)) >= 0) pos++;
      String n = s.substring(start, pos);
      if (n.isEmpty()) throw error("unexpected character '" + s.charAt(start) + "'");
      try {
        return n.indexOf('.') < 0 && n.indexOf('e') < 0 && n.indexOf('E') < 0 ? (Object) Long.parseLong(n)
            : (Object) Double.parseDouble(n);
      } catch (NumberFormatException e) {
        throw error("bad number " + n);
      }
    }

    private Object literal(String word, Object v) {
      if (!s.startsWith(word, pos)) throw error("expected " + word);
      pos += word.length();
      return v;
    }

    private char peek() {
      if (pos >= s.length()) throw error("unexpected end");
      return s.charAt(pos);
    }

    private void expect(char c) {
      if (peek() != c) throw error("expected '" + c + "'");
      pos++;
    }

    void skipSpace() {
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) pos++;
    }

    IllegalArgumentException error(String what) {
      return new IllegalArgumentException("bad JSON at offset " + pos + ": " + what);
    }
  }
}
