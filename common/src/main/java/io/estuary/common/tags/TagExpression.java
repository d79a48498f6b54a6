package io.estuary.common.tags;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Which workers to use, as an expression over worker tags. A worker carries tags of the form {@code key} or
 * {@code key=value}; keys and values are 1 to {@value #MAX_WORD} characters of {@code A-Z a-z 0-9 _ . -}. Grammar
 * (whitespace allowed between tokens; {@code !} binds tighter than {@code &}, which binds tighter than {@code |}):
 *
 * <pre>
 * expr  := and ('|' and)*
 * and   := unary ('&amp;' unary)*
 * unary := '!' unary | '(' expr ')' | atom
 * atom  := key                              -- the tag key, or key=&lt;anything&gt;
 *        | key '=' value                    -- exactly key=value
 *        | key 'in' '{' value (',' value)* '}'  -- key=v for one of the values
 * </pre>
 *
 * The empty expression is {@link #ANY}. An application's expression is ANDed with the operators' default ({@link
 * #and}), so an application can only narrow the workers the operators allow, never widen them. Parsing refuses
 * expressions longer than {@value #MAX_LENGTH} characters or nested ({@code (} and {@code !}) deeper than {@value
 * #MAX_DEPTH}, so a hostile expression cannot exhaust the stack. Immutable and thread-safe; equality is on the
 * canonical form ({@link #toString}).
 */
public final class TagExpression {
    public static final int MAX_LENGTH = 1024;
    public static final int MAX_DEPTH = 32;
    public static final int MAX_WORD = 64;
    /** Matches every worker; prints as "". */
    public static final TagExpression ANY = new TagExpression(null);

    private final Node root; // null for ANY
    private final String canonical;

    private TagExpression(Node root) {
        this.root = root;
        StringBuilder b = new StringBuilder();
        if (root != null) root.print(b, 0);
        this.canonical = b.toString();
    }

    /** Parses an expression; throws {@link IllegalArgumentException} naming the problem and its 1-based column. */
    public static TagExpression parse(String text) {
        if (text.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("tag expression '" + echo(text.substring(0, 40)) + "...' is "
                    + text.length() + " characters long, more than " + MAX_LENGTH);
        }
        Parser p = new Parser(text);
        p.skipSpace();
        if (p.pos == text.length()) return ANY;
        Node node = p.junction(false, 0);
        p.skipSpace();
        if (p.pos < text.length()) {
            if (text.charAt(p.pos) == ')') throw p.error("unmatched ')'", p.pos);
            throw p.expected("expected '&', '|' or the end");
        }
        return new TagExpression(node);
    }

    public boolean matches(Collection<String> tags) {
        return root == null || root.matches(tags);
    }

    /** Both this and {@code other}; ANY is the identity. */
    public TagExpression and(TagExpression other) {
        if (other.isAny()) return this;
        if (isAny()) return other;
        return new TagExpression(Junction.of(true, Arrays.asList(root, other.root)));
    }

    public boolean isAny() {
        return root == null;
    }

    /** What is wrong with an expression's text (as {@link #parse} would say), or null when it parses. */
    public static String problem(String text) {
        try {
            parse(text);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /** What is wrong with the first bad one of a worker's tags, or null when all are fine. */
    public static String tagsProblem(java.util.List<String> tags) {
        for (String t : tags) {
            String p = tagProblem(t);
            if (p != null) return p;
        }
        return null;
    }

    /** What is wrong with a worker tag ({@code key} or {@code key=value}), or null when it is fine. */
    public static String tagProblem(String tag) {
        if (tag == null || tag.isEmpty()) return "a worker tag is empty: write key or key=value";
        int eq = tag.indexOf('=');
        String p = wordProblem("key", tag.substring(0, eq < 0 ? tag.length() : eq), 0);
        if (p == null && eq >= 0) p = wordProblem("value", tag.substring(eq + 1), eq + 1);
        return p == null ? null : "worker tag '" + echo(tag) + "': " + p;
    }

    private static String wordProblem(String what, String word, int offset) {
        if (word.isEmpty()) return "the " + what + " is empty";
        if (word.length() > MAX_WORD)
            return "the " + what + " is " + word.length() + " characters long, more than " + MAX_WORD;
        for (int i = 0; i < word.length(); i++) {
            if (!isWordChar(word.charAt(i))) {
                return "the " + what + " contains " + show(word.charAt(i)) + " at index " + (offset + i)
                        + "; keys and values use only A-Z a-z 0-9 _ . -";
            }
        }
        return null;
    }

    /**
     * The canonical form: fewest parentheses, single spaces around {@code &} and {@code |}, {@code in} values sorted
     * and de-duplicated (a single one prints as {@code key=value}). It parses back to an equal expression.
     */
    @Override
    public String toString() {
        return canonical;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TagExpression && canonical.equals(((TagExpression) o).canonical);
    }

    @Override
    public int hashCode() {
        return canonical.hashCode();
    }

    private static boolean isWordChar(char c) {
        return c < 128 && (Character.isLetterOrDigit(c) || "_.-".indexOf(c) >= 0);
    }

    private static String show(char c) {
        return Character.isISOControl(c) || c > '~' ? String.format("U+%04X", (int) c) : "'" + c + "'";
    }

    /** The text for a message: control characters would break a log line, so they become '?' (spaces stay). */
    private static String echo(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            b.append(!Character.isISOControl(c) ? c : Character.isWhitespace(c) ? ' ' : '?');
        }
        return b.toString();
    }

    /** Recursive descent over the characters; depth counts open '(' and '!' so nesting is bounded. */
    private static final class Parser {
        private final String text;
        private int pos;

        Parser(String text) {
            this.text = text;
        }

        /** {@code and} when {@code all} (unaries joined by '&'), else {@code expr} (those joined by '|'). */
        Node junction(boolean all, int depth) {
            List<Node> parts = new ArrayList<>();
            do parts.add(all ? unary(depth) : junction(true, depth));
            while (take(all ? '&' : '|'));
            return parts.size() == 1 ? parts.get(0) : Junction.of(all, parts);
        }

        Node unary(int depth) {
            skipSpace();
            int start = pos;
            boolean opens = pos < text.length() && (text.charAt(pos) == '!' || text.charAt(pos) == '(');
            if (opens && depth == MAX_DEPTH) throw error("nested deeper than " + MAX_DEPTH, start);
            if (take('!')) return new Not(unary(depth + 1));
            if (take('(')) {
                Node inner = junction(false, depth + 1);
                if (!take(')')) throw expected("unclosed '(' at column " + (start + 1) + ": expected '&', '|' or ')'");
                return inner;
            }
            if (pos < text.length() && isWordChar(text.charAt(pos))) return atom();
            throw expected("expected a tag, '!' or '('");
        }

        Node atom() {
            String key = word("key");
            if (take('=')) return new Atom(key, new TreeSet<>(Collections.singleton(word("value"))));
            skipSpace();
            // 'in' is an operator only right after a key: two words in a row mean nothing else.
            if (text.startsWith("in", pos) && (pos + 2 == text.length() || !isWordChar(text.charAt(pos + 2)))) {
                pos += 2;
                if (!take('{')) throw expected("expected '{' after 'in'");
                skipSpace();
                if (pos < text.length() && text.charAt(pos) == '}') throw error("'in {}' lists no value", pos);
                TreeSet<String> values = new TreeSet<>();
                do values.add(word("value"));
                while (take(','));
                if (!take('}')) throw expected("expected ',' or '}'");
                return new Atom(key, values);
            }
            return new Atom(key, null);
        }

        String word(String what) {
            skipSpace();
            int start = pos;
            while (pos < text.length() && isWordChar(text.charAt(pos))) pos++;
            if (pos == start) throw expected("expected a " + what);
            if (pos - start > MAX_WORD)
                throw error("the " + what + " is " + (pos - start) + " characters long, more than " + MAX_WORD, start);
            return text.substring(start, pos);
        }

        boolean take(char c) {
            skipSpace();
            if (pos < text.length() && text.charAt(pos) == c) {
                pos++;
                return true;
            }
            return false;
        }

        void skipSpace() {
            while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) pos++;
        }

        /** {@code problem} (which says what was expected) at the next token, naming the token found there. */
        IllegalArgumentException expected(String problem) {
            skipSpace();
            if (pos == text.length()) return error(problem, pos);
            char c = text.charAt(pos);
            if (!isWordChar(c) && "!()&|={},".indexOf(c) < 0) return error("unexpected character " + show(c), pos);
            int end = pos + 1;
            while (isWordChar(c) && end < text.length() && isWordChar(text.charAt(end))) end++;
            return error(problem + ", found '" + text.substring(pos, end) + "'", pos);
        }

        IllegalArgumentException error(String problem, int at) {
            return new IllegalArgumentException("tag expression '" + echo(text) + "': " + problem + " at column "
                    + (at + 1) + (at >= text.length() ? " (end of expression)" : ""));
        }
    }

    private abstract static class Node {
        /** 0 for '|', 1 for '&', 2 for '!' and atoms: a child binding looser than its context needs parentheses. */
        final int precedence;

        Node(int precedence) {
            this.precedence = precedence;
        }

        abstract boolean matches(Collection<String> tags);

        abstract void printBare(StringBuilder b);

        final void print(StringBuilder b, int context) {
            if (precedence < context) b.append('(');
            printBare(b);
            if (precedence < context) b.append(')');
        }
    }

    /**
     * The tag {@code key} or {@code key=} anything (values null), else {@code key=v} for one of the values: {@code
     * key=value} is the one-value case, so it and {@code key in {value}} are equal.
     */
    private static final class Atom extends Node {
        private final String key;
        private final SortedSet<String> values;

        Atom(String key, TreeSet<String> values) {
            super(2);
            this.key = key;
            this.values = values == null ? null : Collections.unmodifiableSortedSet(values);
        }

        boolean matches(Collection<String> tags) {
            for (String t : tags) {
                if (values == null && t.equals(key)) return true;
                boolean keyed = t.length() > key.length() && t.startsWith(key) && t.charAt(key.length()) == '=';
                if (keyed && (values == null || values.contains(t.substring(key.length() + 1)))) return true;
            }
            return false;
        }

        void printBare(StringBuilder b) {
            b.append(key);
            if (values == null) return;
            if (values.size() == 1) {
                b.append('=').append(values.first());
                return;
            }
            String sep = " in {";
            for (String v : values) {
                b.append(sep).append(v);
                sep = ", ";
            }
            b.append('}');
        }
    }

    private static final class Not extends Node {
        private final Node operand;

        Not(Node operand) {
            super(2);
            this.operand = operand;
        }

        boolean matches(Collection<String> tags) {
            return !operand.matches(tags);
        }

        void printBare(StringBuilder b) {
            b.append('!');
            operand.print(b, 2);
        }
    }

    /** All ('&') or any ('|') of two or more parts; nested junctions of the same kind are flattened. */
    private static final class Junction extends Node {
        private final boolean all;
        private final List<Node> parts;

        private Junction(boolean all, List<Node> parts) {
            super(all ? 1 : 0);
            this.all = all;
            this.parts = parts;
        }

        static Junction of(boolean all, List<Node> parts) {
            List<Node> flat = new ArrayList<>();
            for (Node n : parts) {
                if (n instanceof Junction && ((Junction) n).all == all) flat.addAll(((Junction) n).parts);
                else flat.add(n);
            }
            return new Junction(all, Collections.unmodifiableList(flat));
        }

        boolean matches(Collection<String> tags) {
            for (Node n : parts) {
                if (n.matches(tags) != all) return !all;
            }
            return all;
        }

        void printBare(StringBuilder b) {
            for (int i = 0; i < parts.size(); i++) {
                if (i > 0) b.append(all ? " & " : " | ");
                parts.get(i).print(b, precedence);
            }
        }
    }
}
