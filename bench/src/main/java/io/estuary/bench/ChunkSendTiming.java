package io.estuary.bench;

import java.io.File;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * The worker's chunk-send data path, timed alone (item 20 of issue 14): a partition file sent in chunks over a
 * loopback socket with FileChannel.transferTo (sendfile), as a network thread sends it, either straight (the old path)
 * or after the chunk was read through once on another thread (the new path: OpenFileSegment.readThrough on a disk's
 * reader thread). Reports, per chunk, the time the sending ("network") thread spends in sendfile, and the reader
 * thread's read time, with the file's pages in the page cache (warm) and dropped before each round (cold, with
 * dd iflag=nocache). Usage (one source file, no build needed): java
 * bench/src/main/java/io/estuary/bench/ChunkSendTiming.java [dir] [fileMb=256] [chunkMb=8] [rounds=3]
 */
public class ChunkSendTiming {
    public static void main(String[] args) throws Exception {
        File dir = new File(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
        int fileMb = args.length > 1 ? Integer.parseInt(args[1]) : 256;
        int chunkMb = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        File f = new File(dir, "chunk-send-timing.data");
        try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
            byte[] block = new byte[1 << 20];
            new java.util.Random(1).nextBytes(block);
            for (int i = 0; i < fileMb; i++) raf.write(block);
        }
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread drain = new Thread(() -> {
                try (Socket s = server.accept();
                        InputStream in = s.getInputStream()) {
                    byte[] buf = new byte[1 << 20];
                    while (in.read(buf) >= 0) {}
                } catch (Exception ignored) {
                    // the run ended
                }
            });
            drain.setDaemon(true);
            drain.start();
            try (SocketChannel out = SocketChannel.open(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()))) {
                for (boolean cold : new boolean[] {false, true}) {
                    for (boolean readThrough : new boolean[] {false, true}) {
                        double[] send = new double[rounds];
                        double[] read = new double[rounds];
                        for (int r = 0; r < rounds; r++) {
                            if (cold)
                                new ProcessBuilder("dd", "if=" + f, "iflag=nocache", "count=0")
                                        .inheritIO()
                                        .start()
                                        .waitFor();
                            else warm(f);
                            double[] t = sendAll(f, out, (long) chunkMb << 20, readThrough);
                            read[r] = t[0];
                            send[r] = t[1];
                        }
                        Arrays.sort(send);
                        Arrays.sort(read);
                        System.out.printf(
                                "%s %-22s per %d MB chunk: network thread in sendfile %.2f ms (median of %d rounds), "
                                        + "reader thread %.2f ms; %.0f MB/s end to end%n",
                                cold ? "cold" : "warm",
                                readThrough ? "read through first:" : "sendfile only (old):",
                                chunkMb,
                                send[rounds / 2],
                                rounds,
                                read[rounds / 2],
                                chunkMb / ((send[rounds / 2] + read[rounds / 2]) / 1000));
                    }
                }
            }
        } finally {
            f.delete();
        }
    }

    private static void warm(File f) throws Exception {
        try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            for (long pos = 0; ; pos += b.position()) {
                b.clear();
                if (ch.read(b, pos) < 0) break;
            }
        }
    }

    /** Sends the file chunk by chunk; returns the mean ms per chunk {reading through, in sendfile}. */
    private static double[] sendAll(File f, SocketChannel out, long chunk, boolean readThrough) throws Exception {
        ByteBuffer scratch = ByteBuffer.allocateDirect(256 << 10);
        long readNs = 0;
        long sendNs = 0;
        int chunks = 0;
        try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
            long size = ch.size();
            for (long off = 0; off < size; off += chunk, chunks++) {
                long len = Math.min(chunk, size - off);
                long t0 = System.nanoTime();
                if (readThrough) {
                    for (long pos = off; pos < off + len; ) {
                        scratch.clear();
                        if (off + len - pos < scratch.capacity()) scratch.limit((int) (off + len - pos));
                        pos += ch.read(scratch, pos);
                    }
                }
                long t1 = System.nanoTime();
                for (long sent = 0; sent < len; ) sent += ch.transferTo(off + sent, len - sent, out);
                long t2 = System.nanoTime();
                readNs += t1 - t0;
                sendNs += t2 - t1;
            }
        }
        return new double[] {readNs / 1e6 / chunks, sendNs / 1e6 / chunks};
    }
}
