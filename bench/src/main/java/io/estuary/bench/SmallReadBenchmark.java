package io.estuary.bench;

import io.estuary.client.ShuffleClient;
import io.estuary.client.lifecycle.LifecycleManager;
import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.spec.ShuffleSpec;
import io.estuary.client.write.MapOutputWriter;
import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.MasterConfig;
import io.estuary.common.config.WorkerConfig;
import io.estuary.master.Master;
import io.estuary.worker.Worker;
import io.estuary.worker.storage.Disk;
import io.estuary.worker.storage.PartitionCache;
import io.netty.buffer.ByteBuf;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Reads of many small partitions under a concurrent heavy read load, with the workers' small-partition cache on and
 * off (bench/read-small.sh). For each setting: a master and two workers in this JVM (one disk each, in a temporary
 * directory), one shuffle of thousands of small partitions (a few KB each) and one of a few big ones, all on the
 * same disks. Big partitions are then read in a loop by several threads while many readers read every small
 * partition once; each small read (open, fetch, decode) is timed.
 *
 * <p>On a test machine the big files sit in the page cache, so real reads never make a disk's read queue the
 * bottleneck (the CPU is). To model a disk that is busy, as a loaded HDD serving big reads is, the benchmark also
 * keeps {@code busyDepth} tasks of {@code busyMs} each queued on every disk's read threads (each task sleeps, then
 * queues itself again): every open or chunk read from disk waits behind them, as it would behind seeks. busyDepth=0
 * measures the real load alone. Every small partition is checked against what was written (record count and an order-independent
 * checksum). Prints p50/p99/max/mean per small read for each setting, the big-read throughput beside them (so the
 * load is seen to be comparable) and the off/on ratios.
 *
 * <p>Not a test: timings depend on the machine. Engine-neutral client API only (no Spark).
 */
public final class SmallReadBenchmark {
    private SmallReadBenchmark() {}

    static final class Params {
        int smallPartitions = 4000;
        int smallKb = 4;
        int readers = 32;
        int bigPartitions = 8;
        int bigMb = 256;
        int bigReaders = 2;
        int maps = 4;
        int readThreadsPerDisk = 2;
        int busyMs = 5;
        int busyDepth = 8;
    }

    static final class Result {
        final long[] nanos;
        final long bigBytes;
        final double seconds;
        final long hits;
        final long misses;

        Result(long[] nanos, long bigBytes, double seconds, long hits, long misses) {
            this.nanos = nanos;
            this.bigBytes = bigBytes;
            this.seconds = seconds;
            this.hits = hits;
            this.misses = misses;
        }

        double pct(double q) {
            return nanos[Math.min(nanos.length - 1, (int) Math.ceil(q * nanos.length) - 1)] / 1e6;
        }

        double max() {
            return nanos[nanos.length - 1] / 1e6;
        }

        double mean() {
            double s = 0;
            for (long n : nanos) s += n;
            return s / nanos.length / 1e6;
        }
    }

    /** Per partition: records and an order-independent sum of record hashes. */
    static final class Tally {
        final long[] count;
        final long[] sum;

        Tally(int partitions) {
            count = new long[partitions];
            sum = new long[partitions];
        }

        void add(int p, byte[] record) {
            count[p]++;
            sum[p] += Arrays.hashCode(record) * 0x9E3779B97F4A7C15L;
        }
    }

    /** A master and two workers in this JVM, on loopback, with their disks under a temporary directory. */
    static final class LocalCluster implements AutoCloseable {
        final Path root;
        final Master master;
        final List<Worker> workers = new ArrayList<>();

        LocalCluster(boolean cache, Params p) throws Exception {
            root = Files.createTempDirectory("estuary-read-small");
            Path secret = BenchSecrets.clusterSecretFile(root);
            master = new Master(BenchSecrets.server(new EstuaryConf(), secret)
                    .set(MasterConfig.HOST, "127.0.0.1")
                    .set(MasterConfig.PORT, "0")
                    .set(MasterConfig.HTTP_PORT, "0"));
            for (int i = 0; i < 2; i++) {
                workers.add(new Worker(BenchSecrets.server(new EstuaryConf(), secret)
                        .set(WorkerConfig.HOST, "127.0.0.1")
                        .set(WorkerConfig.RPC_PORT, "0")
                        .set(WorkerConfig.PUSH_PORT, "0")
                        .set(WorkerConfig.FETCH_PORT, "0")
                        .set(WorkerConfig.HTTP_PORT, "0")
                        .set(WorkerConfig.DISK_RESERVE, "0")
                        .set(
                                WorkerConfig.STORAGE_DIRS,
                                root.resolve("worker" + i).toString())
                        .set(WorkerConfig.FETCH_THREADS_PER_DISK, Integer.toString(p.readThreadsPerDisk))
                        .set(WorkerConfig.CACHE_ENABLED, Boolean.toString(cache))
                        .set(MasterConfig.ENDPOINTS, endpoint())));
            }
            long deadline = System.currentTimeMillis() + 60_000;
            for (Worker w : workers) {
                while (!w.registeredWithMaster()) {
                    if (System.currentTimeMillis() > deadline)
                        throw new IllegalStateException("workers did not register");
                    Thread.sleep(20);
                }
            }
        }

        String endpoint() {
            return "127.0.0.1:" + master.port();
        }

        long sum(java.util.function.ToLongFunction<PartitionCache> f) {
            long n = 0;
            for (Worker w : workers) n += f.applyAsLong(w.storage().cache());
            return n;
        }

        @Override
        public void close() throws Exception {
            for (Worker w : workers) w.close();
            master.close();
            try (Stream<Path> files = Files.walk(root)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Params p = new Params();
        String modes = "both";
        for (String a : args) {
            String[] kv = a.split("=", 2);
            if (kv.length != 2) throw new IllegalArgumentException("arguments are key=value: " + a);
            int v = kv[0].equals("cache") ? 0 : Integer.parseInt(kv[1]);
            switch (kv[0]) {
                case "partitions":
                    p.smallPartitions = v;
                    break;
                case "kb":
                    p.smallKb = v;
                    break;
                case "readers":
                    p.readers = v;
                    break;
                case "bigMb":
                    p.bigMb = v;
                    break;
                case "bigReaders":
                    p.bigReaders = v;
                    break;
                case "readThreads":
                    p.readThreadsPerDisk = v;
                    break;
                case "busyMs":
                    p.busyMs = v;
                    break;
                case "busyDepth":
                    p.busyDepth = v;
                    break;
                case "cache":
                    modes = kv[1];
                    break;
                default:
                    throw new IllegalArgumentException("unknown argument " + kv[0]);
            }
        }
        System.out.printf(
                "%d small partitions of ~%d KB (%d maps), %d readers; heavy load: %d readers of %d big "
                        + "partitions (%d MB) and %d queued tasks of %d ms per disk; %d read threads per disk; 2 workers, 1 disk "
                        + "each%n",
                p.smallPartitions,
                p.smallKb,
                p.maps,
                p.readers,
                p.bigReaders,
                p.bigPartitions,
                p.bigMb,
                p.busyDepth,
                p.busyMs,
                p.readThreadsPerDisk);
        Result on = null;
        Result off = null;
        if (!modes.equals("off")) on = run(true, p);
        if (!modes.equals("on")) off = run(false, p);
        System.out.println();
        System.out.printf(
                "%-10s %9s %9s %9s %9s %12s %10s %10s%n",
                "cache", "p50 ms", "p99 ms", "max ms", "mean ms", "big MB/s", "hits", "misses");
        for (Result r : new Result[] {on, off}) {
            if (r == null) continue;
            System.out.printf(
                    "%-10s %9.2f %9.2f %9.2f %9.2f %12.1f %10d %10d%n",
                    r == on ? "on" : "off",
                    r.pct(0.5),
                    r.pct(0.99),
                    r.max(),
                    r.mean(),
                    r.bigBytes / r.seconds / (1 << 20),
                    r.hits,
                    r.misses);
        }
        if (on != null && off != null) {
            System.out.printf(
                    "off/on     %9.2f %9.2f %9.2f %9.2f%n",
                    off.pct(0.5) / on.pct(0.5),
                    off.pct(0.99) / on.pct(0.99),
                    off.max() / on.max(),
                    off.mean() / on.mean());
        }
    }

    static Result run(boolean cache, Params p) throws Exception {
        System.out.printf("%ncache %s: starting a master and 2 workers%n", cache ? "on" : "off");
        try (LocalCluster cluster = new LocalCluster(cache, p)) {
            EstuaryConf conf =
                    BenchSecrets.application(new EstuaryConf()).set(MasterConfig.ENDPOINTS, cluster.endpoint());
            ShuffleClient client = new ShuffleClient(conf);
            LifecycleManager lifecycle =
                    new LifecycleManager("read-small-" + (cache ? "on" : "off"), conf, "127.0.0.1");
            try {
                ShuffleSpec small =
                        new ShuffleSpec(lifecycle.appId(), 0, p.maps, p.smallPartitions, "127.0.0.1", lifecycle.port());
                ShuffleSpec big =
                        new ShuffleSpec(lifecycle.appId(), 1, p.maps, p.bigPartitions, "127.0.0.1", lifecycle.port());
                long t0 = System.nanoTime();
                Tally expected = write(client, small, p.smallKb * 1024L / p.maps, 200, 1);
                System.out.printf(
                        "  wrote %d small partitions in %.1f s%n", p.smallPartitions, (System.nanoTime() - t0) / 1e9);
                t0 = System.nanoTime();
                write(client, big, (long) p.bigMb * (1 << 20) / p.bigPartitions / p.maps, 16 * 1024, 2);
                System.out.printf(
                        "  wrote %d big partitions in %.1f s%n", p.bigPartitions, (System.nanoTime() - t0) / 1e9);
                if (cache) awaitFills(cluster, p.smallPartitions);

                // The heavy load: big partitions read over and over until the small reads are done.
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong bigBytes = new AtomicLong();
                List<Thread> heavy = new ArrayList<>();
                AtomicInteger nextBig = new AtomicInteger();
                for (int i = 0; i < p.bigReaders; i++) {
                    Thread t = new Thread(
                            () -> {
                                while (!stop.get()) {
                                    int part = Math.floorMod(nextBig.getAndIncrement(), p.bigPartitions);
                                    try (ShuffleBatchReader r =
                                            new ShuffleBatchReader(client, big, part, part + 1, 0, p.maps)) {
                                        ByteBuf b;
                                        while (!stop.get() && (b = r.next()) != null)
                                            bigBytes.addAndGet(b.readableBytes());
                                    } catch (Exception e) {
                                        throw new IllegalStateException("big read failed", e);
                                    }
                                }
                            },
                            "big-reader-" + i);
                    t.setDaemon(true);
                    heavy.add(t);
                    t.start();
                }
                for (Worker w : cluster.workers) {
                    for (Disk d : w.storage().disks()) {
                        for (int i = 0; i < p.busyDepth; i++) d.readers().execute(new BusyDisk(d, p.busyMs, stop));
                    }
                }
                Thread.sleep(2000); // the load reaches its pace

                // Warm-up (JIT, connections): a tenth of the small partitions, read and checked, not timed.
                readSmall(client, small, p, expected, Math.max(1, p.smallPartitions / 10), null);
                long bigBefore = bigBytes.get();
                long hitsBefore = cluster.sum(c -> c.counters().hits());
                long missesBefore = cluster.sum(c -> c.counters().misses());
                long[] nanos = new long[p.smallPartitions];
                t0 = System.nanoTime();
                readSmall(client, small, p, expected, p.smallPartitions, nanos);
                double secs = (System.nanoTime() - t0) / 1e9;
                long bigRead = bigBytes.get() - bigBefore;
                stop.set(true);
                for (Thread t : heavy) t.join(60_000);
                Arrays.sort(nanos);
                Result r = new Result(
                        nanos,
                        bigRead,
                        secs,
                        cluster.sum(c -> c.counters().hits()) - hitsBefore,
                        cluster.sum(c -> c.counters().misses()) - missesBefore);
                System.out.printf(
                        "  read %d small partitions in %.1f s (all counts and checksums match); big reads "
                                + "meanwhile %.0f MB%n",
                        p.smallPartitions, secs, bigRead / (double) (1 << 20));
                return r;
            } finally {
                lifecycle.close();
                client.close();
            }
        }
    }

    /** Occupies one of a disk's read threads for a while, then queues itself again until stopped. */
    static final class BusyDisk implements Runnable {
        final Disk disk;
        final long nanos;
        final AtomicBoolean stop;

        BusyDisk(Disk disk, int ms, AtomicBoolean stop) {
            this.disk = disk;
            this.nanos = ms * 1_000_000L;
            this.stop = stop;
        }

        @Override
        public void run() {
            java.util.concurrent.locks.LockSupport.parkNanos(nanos);
            if (stop.get()) return;
            try {
                disk.readers().execute(this);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // the worker is closing
            }
        }
    }

    /** Writes {@code bytesPerMapPartition} of random records of about {@code recordSize} to each partition. */
    static Tally write(ShuffleClient client, ShuffleSpec spec, long bytesPerMapPartition, int recordSize, long seed)
            throws Exception {
        Tally t = new Tally(spec.numPartitions);
        Random random = new Random(seed);
        for (int m = 0; m < spec.numMappers; m++) {
            MapOutputWriter w = new MapOutputWriter(client, spec, m, 0);
            for (int part = 0; part < spec.numPartitions; part++) {
                for (long written = 0; written < bytesPerMapPartition; ) {
                    byte[] rec = new byte[recordSize / 2 + random.nextInt(recordSize)];
                    random.nextBytes(rec);
                    byte[] framed = ByteBuffer.allocate(4 + rec.length)
                            .putInt(rec.length)
                            .put(rec)
                            .array();
                    w.write(part, framed, 0, framed.length);
                    t.add(part, rec);
                    written += framed.length;
                }
            }
            w.finish();
        }
        return t;
    }

    /** Waits until the workers' caches stop growing (every small partition, unless memory refused some). */
    static void awaitFills(LocalCluster cluster, int partitions) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 120_000;
        long last = -1;
        while (System.currentTimeMillis() < deadline) {
            long now = cluster.sum(PartitionCache::entries);
            if (now >= partitions || now == last) break;
            last = now;
            Thread.sleep(1000);
        }
        System.out.printf(
                "  cached %d of %d small partitions (%d KB)%n",
                cluster.sum(PartitionCache::entries), partitions, cluster.sum(PartitionCache::bytes) / 1024);
    }

    /** Reads partitions 0..count-1 with {@code p.readers} threads, checking each; times each into {@code nanos}. */
    static void readSmall(ShuffleClient client, ShuffleSpec spec, Params p, Tally expected, int count, long[] nanos)
            throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < p.readers; i++) {
            Thread t = new Thread(
                    () -> {
                        for (int part; (part = next.getAndIncrement()) < count; ) {
                            try {
                                long t0 = System.nanoTime();
                                long records = 0;
                                long sum = 0;
                                try (ShuffleBatchReader r =
                                        new ShuffleBatchReader(client, spec, part, part + 1, 0, spec.numMappers)) {
                                    ByteBuf b;
                                    while ((b = r.next()) != null) {
                                        while (b.isReadable()) {
                                            byte[] rec = new byte[b.readInt()];
                                            b.readBytes(rec);
                                            records++;
                                            sum += Arrays.hashCode(rec) * 0x9E3779B97F4A7C15L;
                                        }
                                    }
                                }
                                if (nanos != null) nanos[part] = System.nanoTime() - t0;
                                if (records != expected.count[part] || sum != expected.sum[part]) {
                                    throw new IllegalStateException(
                                            "partition " + part + ": " + records + " records read, "
                                                    + expected.count[part] + " written, or checksums differ");
                                }
                            } catch (Throwable e) {
                                failures.add(e);
                                return;
                            }
                        }
                    },
                    "small-reader-" + i);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) t.join();
        if (!failures.isEmpty()) throw new IllegalStateException("small reads failed", failures.get(0));
    }
}
