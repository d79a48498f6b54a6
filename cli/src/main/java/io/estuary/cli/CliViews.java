package io.estuary.cli;

import java.util.List;
import java.util.Map;

/**
 * What {@code estuary --json} prints that no server answers as such (the CLI joins several masters' answers); the
 * other commands print the masters' {@link io.estuary.server.admin.AdminViews} as they came. Immutable values.
 */
public final class CliViews {
    private CliViews() {}

    /**
     * One master of the group, joined with what it says of itself: {@code role} "unreachable" (and no term or version)
     * when it did not answer; {@code http} is the address it was asked at, {@code id} null for an address that no
     * group member could be matched to.
     */
    public record MasterRow(String id, String role, Long term, String version, String http, String rpc) {}

    /** {@code estuary --json masters}. */
    public record MasterRows(List<MasterRow> masters) {}

    /**
     * {@code estuary --json status}: the leader's id and term (null without one), every master, workers counted by
     * state, how many workers and applications, which nodes run which version, and whether they differ.
     */
    public record ClusterStatus(
            String leader,
            Long term,
            List<MasterRow> masters,
            Map<String, Integer> workersByState,
            int workers,
            int applications,
            Map<String, List<String>> versions,
            boolean mixedVersions) {}
}
