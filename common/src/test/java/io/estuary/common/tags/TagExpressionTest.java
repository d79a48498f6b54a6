package io.estuary.common.tags;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Grammar, matching, the canonical form, and the messages for malformed expressions and tags. */
class TagExpressionTest {
    private static final List<String> WORKER = Arrays.asList("team=a", "ssd", "zone=z1");

    private static boolean matches(String expr, String... tags) {
        return TagExpression.parse(expr).matches(Arrays.asList(tags));
    }

    @Test
    void atomsMatchTags() {
        assertTrue(TagExpression.parse("team").matches(WORKER), "a key alone matches key=<anything>");
        assertTrue(TagExpression.parse("ssd").matches(WORKER));
        assertFalse(TagExpression.parse("ssd=x").matches(WORKER), "key=value needs that exact tag");
        assertTrue(TagExpression.parse("team=a").matches(WORKER));
        assertFalse(TagExpression.parse("team=b").matches(WORKER));
        assertFalse(TagExpression.parse("tea").matches(WORKER), "a key is not a prefix");
        assertFalse(TagExpression.parse("teams").matches(WORKER));
        assertFalse(TagExpression.parse("gpu").matches(WORKER));
        assertTrue(TagExpression.parse("team in {b, a}").matches(WORKER));
        assertFalse(TagExpression.parse("team in {b, c}").matches(WORKER));
        assertFalse(TagExpression.parse("ssd in {x, y}").matches(WORKER), "a bare tag has no value");
        assertTrue(TagExpression.parse("in").matches(Collections.singletonList("in=1")), "'in' is a key at the start");
        assertTrue(TagExpression.parse("in in {1, 2}").matches(Collections.singletonList("in=1")));
    }

    @Test
    void notBindsTighterThanAndWhichBindsTighterThanOr() {
        assertEquals(TagExpression.parse("a | (b & c)"), TagExpression.parse("a | b & c"));
        assertNotEquals(TagExpression.parse("(a | b) & c"), TagExpression.parse("a | b & c"));
        assertTrue(matches("a | b & c", "a"));
        assertFalse(matches("(a | b) & c", "a"));
        assertEquals(TagExpression.parse("(!a) & b"), TagExpression.parse("!a & b"));
        assertTrue(matches("!a & b", "b"));
        assertFalse(matches("!a & b", "a", "b"));
        assertTrue(matches("!(a & b)", "a"));
        assertFalse(matches("!(a & b)", "a", "b"));
        assertTrue(matches("!!a", "a"));
        assertTrue(matches("a & (b | !c)", "a"));
        assertFalse(matches("a & (b | !c)", "a", "c"));
        assertTrue(matches(" ( team = a | team=b )&!ssd ", "team=b"));
    }

    @Test
    void canonicalFormIsMinimalAndParsesBack() {
        String[][] cases = {
            {"  team  in{b,a,b} &!( x|y )", "team in {a, b} & !(x | y)"},
            {"a & (b & c)", "a & b & c"},
            {"((a | b)) | c", "a | b | c"},
            {"(a)", "a"},
            {"a | (b & c)", "a | b & c"},
            {"(a | b) & c", "(a | b) & c"},
            {"!(a)", "!a"},
            {"! ! a", "!!a"},
            {"!(a & b) | !(c | d)", "!(a & b) | !(c | d)"},
            {"team in {a}", "team=a"},
            {"k=v", "k=v"},
            {"\tx.y_z-1 = V.2\n", "x.y_z-1=V.2"},
        };
        for (String[] c : cases) {
            TagExpression e = TagExpression.parse(c[0]);
            assertEquals(c[1], e.toString(), c[0]);
            assertEquals(e, TagExpression.parse(e.toString()), c[0]);
            assertEquals(e.hashCode(), TagExpression.parse(e.toString()).hashCode(), c[0]);
        }
        assertEquals(TagExpression.parse("team=a"), TagExpression.parse("team in {a, a}"));
    }

    @Test
    void emptyIsAnyAndAndNarrows() {
        assertSame(TagExpression.ANY, TagExpression.parse(""));
        assertTrue(TagExpression.parse(" \t\n").isAny());
        assertEquals("", TagExpression.ANY.toString());
        assertTrue(TagExpression.ANY.matches(Collections.<String>emptyList()));
        assertFalse(TagExpression.parse("a").isAny());

        TagExpression operators = TagExpression.parse("zone in {z1, z2}");
        assertSame(operators, TagExpression.ANY.and(operators));
        assertSame(operators, operators.and(TagExpression.ANY));
        TagExpression both = operators.and(TagExpression.parse("ssd | team=a"));
        assertEquals("zone in {z1, z2} & (ssd | team=a)", both.toString());
        assertEquals(both, TagExpression.parse(both.toString()));
        assertTrue(both.matches(WORKER));
        assertFalse(both.matches(Arrays.asList("zone=z3", "ssd")), "the application cannot widen the default");
        assertEquals(
                "a & b & c",
                TagExpression.parse("a & b").and(TagExpression.parse("c")).toString());
        assertEquals(
                "a & !b",
                TagExpression.parse("a").and(TagExpression.parse("!b")).toString());
    }

    @Test
    void malformedExpressionsNameTheProblemAndColumn() {
        assertError(
                "team=a &", "tag expression 'team=a &': expected a tag, '!' or '(' at column 9 (end of expression)");
        assertError("a # b", "tag expression 'a # b': unexpected character '#' at column 3");
        assertError("te$m", "unexpected character '$' at column 3");
        assertError("a=\u00e9", "unexpected character U+00E9 at column 3");
        assertError("team in {}", "'in {}' lists no value at column 10");
        assertError("team in { }", "'in {}' lists no value at column 11");
        assertError("(a | b", "unclosed '(' at column 1: expected '&', '|' or ')' at column 7 (end of expression)");
        assertError("(a (b)", "unclosed '(' at column 1: expected '&', '|' or ')', found '(' at column 4");
        assertError("a | b)", "unmatched ')' at column 6");
        assertError("a b", "expected '&', '|' or the end, found 'b' at column 3");
        assertError("a & | b", "expected a tag, '!' or '(', found '|' at column 5");
        assertError("()", "expected a tag, '!' or '(', found ')' at column 2");
        assertError("!", "expected a tag, '!' or '(' at column 2 (end of expression)");
        assertError("team=", "expected a value at column 6 (end of expression)");
        assertError("=a", "expected a tag, '!' or '(', found '=' at column 1");
        assertError("team in a", "expected '{' after 'in', found 'a' at column 9");
        assertError("team in {a b}", "expected ',' or '}', found 'b' at column 12");
        assertError("team in {a,}", "expected a value, found '}' at column 12");
        assertError("team in {a", "expected ',' or '}' at column 11 (end of expression)");
        assertError("a\u0001", "tag expression 'a?': unexpected character U+0001 at column 2");
        assertError(repeat("k", 65), "the key is 65 characters long, more than 64 at column 1");
        assertError("k=" + repeat("v", 65), "the value is 65 characters long, more than 64 at column 3");
        assertEquals(
                repeat("k", 64) + "=" + repeat("v", 64),
                TagExpression.parse(repeat("k", 64) + "=" + repeat("v", 64)).toString());
    }

    @Test
    void lengthAndDepthAreBounded() {
        assertEquals("a", TagExpression.parse("a" + repeat(" ", 1023)).toString());
        assertError("a" + repeat(" ", 1024), "is 1025 characters long, more than 1024");

        assertEquals(
                "a",
                TagExpression.parse(repeat("(", 32) + "a" + repeat(")", 32)).toString());
        assertError(repeat("(", 33) + "a" + repeat(")", 33), "nested deeper than 32 at column 33");
        assertTrue(matches(repeat("!", 32) + "a", "a"));
        assertError(repeat("!", 33) + "a", "nested deeper than 32 at column 33");
        assertError(repeat("!(", 17) + "a" + repeat(")", 17), "nested deeper than 32 at column 33");
        StringBuilder wide = new StringBuilder("a");
        for (int i = 0; i < 300; i++) wide.append("|a");
        assertTrue(TagExpression.parse(wide.toString()).matches(Collections.singletonList("a")), "wide, not deep");
    }

    @Test
    void tagProblems() {
        for (String ok : new String[] {"ssd", "team=a", "zone=us-east-1a", "a.b_c-D9=x.Y", repeat("k", 64)}) {
            assertNull(TagExpression.tagProblem(ok), ok);
        }
        assertEquals("a worker tag is empty: write key or key=value", TagExpression.tagProblem(""));
        assertEquals("worker tag '=a': the key is empty", TagExpression.tagProblem("=a"));
        assertEquals("worker tag 'a=': the value is empty", TagExpression.tagProblem("a="));
        assertEquals(
                "worker tag 'a=b=c': the value contains '=' at index 3; keys and values use only A-Z a-z 0-9 _ . -",
                TagExpression.tagProblem("a=b=c"));
        assertTrue(TagExpression.tagProblem("te am").contains("the key contains ' ' at index 2"));
        assertTrue(TagExpression.tagProblem("a\n").contains("'a ': the key contains U+000A at index 1"));
        assertTrue(TagExpression.tagProblem(repeat("k", 65)).contains("the key is 65 characters long, more than 64"));
        assertTrue(TagExpression.tagProblem("k=" + repeat("v", 65)).contains("the value is 65 characters long"));
    }

    private static void assertError(String expr, String message) {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> TagExpression.parse(expr), expr);
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    private static String repeat(String s, int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) b.append(s);
        return b.toString();
    }
}
