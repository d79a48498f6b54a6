package io.estuary.client.read;

import io.estuary.common.protocol.EpochFiles;
import io.estuary.common.protocol.PartitionLocation;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * One epoch of one partition still to read, with its copies not yet tried and those put aside to be tried again.
 * Confined to the reader's thread.
 */
final class EpochRead {
    /** One copy of an epoch, and how far its read got. */
    static final class CopyRead {
        final PartitionLocation location;
        /** Failures after its worker had answered (the copy's retry budget). */
        int failures;
        /** Chunks before this one were returned whole: a retry of this copy goes on from here. */
        int resumeChunk;
        /** Its stream's shape at the last open (-1 before): a reopen resumes only when it is the same. */
        int numChunks = -1;

        long totalBytes = -1;

        CopyRead(PartitionLocation location) {
            this.location = location;
        }
    }

    final int partition;
    final int epoch;
    final Deque<CopyRead> copies = new ArrayDeque<>();
    /** Copies that failed for a reason that may pass: tried again after a wait, once the others failed too. */
    final List<CopyRead> retry = new ArrayList<>();
    /** Where this partition's reads are counted (shared by its epochs). */
    final PartitionCounts counts;

    /** Bytes the epoch committed (a map-range read is served at most these). */
    final long bytes;

    boolean done;
    /** The open of its first copy, sent ahead of its turn (null: none). */
    CopyOpener.Ahead ahead;

    EpochRead(int partition, EpochFiles e, PartitionCounts counts) {
        this.partition = partition;
        this.epoch = e.getEpoch();
        this.bytes = e.getBytes();
        for (PartitionLocation l : e.getCopiesList()) copies.add(new CopyRead(l));
        this.counts = counts;
    }
}
