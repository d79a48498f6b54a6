package io.estuary.cli;

import java.util.List;

/**
 * The scope a quota or default tag expression is for, as a command line names it: {@code user NAME}, {@code tenant
 * NAME} or {@code cluster}, from word {@code at} on; {@link #next} is the first word after it. Immutable.
 */
final class ScopeWords {
    final String scope;
    /** The user or tenant; "" for the cluster. */
    final String name;

    final int next;

    private ScopeWords(String scope, String name, int next) {
        this.scope = scope;
        this.name = name;
        this.next = next;
    }

    /** {@code command}: what the words belong to, for the usage error ("quota set", "tags default"). */
    static ScopeWords parse(List<String> words, int at, String command) throws CliException {
        if (words.size() <= at) throw new CliException(CliException.USAGE, command + " needs a scope");
        String scope = words.get(at);
        if (scope.equals("cluster")) return new ScopeWords(scope, "", at + 1);
        if (!scope.equals("user") && !scope.equals("tenant")) {
            throw new CliException(
                    CliException.USAGE, "scope '" + scope + "' is none of user NAME, tenant NAME, cluster");
        }
        if (words.size() <= at + 1) {
            throw new CliException(CliException.USAGE, command + " " + scope + " needs the " + scope + "'s name");
        }
        return new ScopeWords(scope, words.get(at + 1), at + 2);
    }

    /** "the cluster", "user alice": how an answer names a scope. */
    static String who(String scope, String name) {
        return scope.equals("cluster") ? "the cluster" : scope + " " + name;
    }
}
