package io.estuary.client.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.estuary.common.protocol.PartitionFiles;
import io.estuary.common.protocol.PartitionStats;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The driver's record of what winning map attempts wrote: what readers get from it, and that it stays small (a
 * 10,000 x 10,000 shuffle used to need about 6 GB of driver heap for it).
 */
class ShuffleStateCountsTest {
    private static final int MAPS = 2000;
    private static final int PARTITIONS = 2000;
    /** Keeps the measured state reachable while the heap is measured. */
    private static volatile Object kept;

    /** Every map writes 1 or 2 batches to every partition: the dense case, the largest per map and partition. */
    private static List<PartitionStats> denseStats(Random random) {
        List<PartitionStats> stats = new ArrayList<>(PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            stats.add(PartitionStats.newBuilder()
                    .setPartitionId(p)
                    .setBatches(1 + random.nextInt(2))
                    .setRecords(1 + random.nextInt(5000))
                    .setChecksum(random.nextInt() & 0xffffffffL)
                    .build());
        }
        return stats;
    }

    @Test
    void heapPerMapAndPartitionIsAFewBytes() {
        long before = heapUsedAfterGc();
        ShuffleState s = new ShuffleState(1, 1, 0, 0, MAPS, PARTITIONS);
        kept = s;
        Random random = new Random(7);
        for (int m = 0; m < MAPS; m++) s.mapEnded(m, 0, denseStats(random)); // each list is garbage once handed over
        long after = heapUsedAfterGc();
        kept = null;
        double perEntry = (after - before) / (double) MAPS / PARTITIONS;
        // Measured: about 60 bytes with the statistics kept as objects; about 2 with the compact counts. The bound
        // leaves room for what else the collector keeps or frees meanwhile (a few MB over 4 million entries).
        assertTrue(perEntry < 8, "the driver keeps " + perEntry + " heap bytes per map and partition");
    }

    @Test
    void countedBytesPerMapAndPartitionStayUnderThree() {
        ShuffleState s = new ShuffleState(1, 1, 0, 0, MAPS, PARTITIONS);
        Random random = new Random(7);
        for (int m = 0; m < MAPS; m++) s.mapEnded(m, 0, denseStats(random));
        double perEntry = s.writtenCountsBytes() / (double) MAPS / PARTITIONS;
        assertTrue(perEntry < 3, perEntry + " bytes per map and partition");
        // 10,000 x 10,000 then needs at most about 300 MB, against about 6 GB as objects.
    }

    @Test
    void readersOfAllMapsGetEveryCountAndReadersOfSomeMapsGetBatches() {
        int maps = 40;
        int partitions = 300;
        Random random = new Random(11);
        long[][] batches = new long[maps][partitions];
        long[][] records = new long[maps][partitions];
        long[][] checksums = new long[maps][partitions];
        ShuffleState s = new ShuffleState(1, 1, 0, 0, maps, partitions);
        for (int m = 0; m < maps; m++) {
            List<PartitionStats> stats = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                if (random.nextInt(3) == 0) continue; // sparse: some partitions get nothing from this map
                // Large counts need several varint bytes; a partition may be listed twice and counts twice.
                int entries = random.nextInt(10) == 0 ? 2 : 1;
                for (int e = 0; e < entries; e++) {
                    int b = random.nextInt(4) == 0 ? random.nextInt(Integer.MAX_VALUE) : random.nextInt(3);
                    long r = random.nextInt(1 << 20);
                    long c = random.nextLong();
                    stats.add(PartitionStats.newBuilder()
                            .setPartitionId(p)
                            .setBatches(b)
                            .setRecords(r)
                            .setChecksum(c)
                            .build());
                    batches[m][p] += b;
                    records[m][p] += r;
                    checksums[m][p] += c;
                }
            }
            Collections.shuffle(stats, random); // the order of the request is not trusted
            s.mapEnded(m, 0, stats);
        }
        // A later attempt of an ended map changes nothing.
        assertEquals(
                0,
                s.mapEnded(
                        3,
                        1,
                        Collections.singletonList(PartitionStats.newBuilder()
                                .setPartitionId(0)
                                .setBatches(99)
                                .build())));

        PartitionFiles.Builder[] all = files(partitions);
        assertTrue(s.setExpected(all, 0, 0, maps));
        for (int p = 0; p < partitions; p++) {
            long b = 0;
            long r = 0;
            long c = 0;
            for (int m = 0; m < maps; m++) {
                b += batches[m][p];
                r += records[m][p];
                c += checksums[m][p];
            }
            assertEquals(b, all[p].getExpectedBatches(), "batches of partition " + p);
            assertEquals(r, all[p].getExpectedRecords(), "records of partition " + p);
            assertEquals(c, all[p].getExpectedChecksum(), "checksum of partition " + p);
        }

        for (int i = 0; i < 200; i++) {
            int startMap = random.nextInt(maps);
            int endMap = startMap + 1 + random.nextInt(maps - startMap);
            if (startMap == 0 && endMap == maps) endMap--;
            int start = random.nextInt(partitions);
            int end = start + 1 + random.nextInt(partitions - start);
            PartitionFiles.Builder[] range = files(end - start);
            assertFalse(s.setExpected(range, start, startMap, endMap));
            for (int p = start; p < end; p++) {
                long b = 0;
                for (int m = startMap; m < endMap; m++) b += batches[m][p];
                assertEquals(
                        b,
                        range[p - start].getExpectedBatches(),
                        "batches of partition " + p + " from maps [" + startMap + ", " + endMap + ")");
                assertEquals(0, range[p - start].getExpectedRecords());
            }
        }
    }

    private static PartitionFiles.Builder[] files(int n) {
        PartitionFiles.Builder[] files = new PartitionFiles.Builder[n];
        for (int i = 0; i < n; i++) files[i] = PartitionFiles.newBuilder();
        return files;
    }

    private static long heapUsedAfterGc() {
        for (int i = 0; i < 3; i++) System.gc(); // a full, stop-the-world collection on the JVM's default collector
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
