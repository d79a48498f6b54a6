package io.estuary.mr;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * What a job wrote, in a form two runs can be compared by: line count, an order-independent checksum (sum of 64-bit
 * FNV-1a hashes of the lines), and whether the part files, read in order, are sorted by the text before the first
 * tab (what a total-order sort must produce).
 */
final class JobOutput {
    final long lines;
    final long checksum;
    final boolean globallySorted;

    private JobOutput(long lines, long checksum, boolean globallySorted) {
        this.lines = lines;
        this.checksum = checksum;
        this.globallySorted = globallySorted;
    }

    static JobOutput read(Configuration conf, Path dir) throws IOException {
        FileSystem fs = dir.getFileSystem(conf);
        FileStatus[] parts = fs.listStatus(dir, p -> p.getName().startsWith("part-"));
        Arrays.sort(parts, (a, b) -> a.getPath().getName().compareTo(b.getPath().getName()));
        long n = 0;
        long sum = 0;
        boolean sorted = true;
        String previousKey = null;
        for (FileStatus part : parts) {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(fs.open(part.getPath()), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    n++;
                    sum += hash(line);
                    int tab = line.indexOf('\t');
                    String key = tab < 0 ? line : line.substring(0, tab);
                    if (previousKey != null && previousKey.compareTo(key) > 0) sorted = false;
                    previousKey = key;
                }
            }
        }
        return new JobOutput(n, sum, sorted);
    }

    static long hash(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= b;
            h *= 0x100000001b3L;
        }
        return h;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof JobOutput)) return false;
        JobOutput x = (JobOutput) o;
        return lines == x.lines && checksum == x.checksum && globallySorted == x.globallySorted;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(lines * 31 + checksum);
    }

    @Override
    public String toString() {
        return lines + " lines, checksum " + Long.toHexString(checksum) + (globallySorted ? ", sorted" : "");
    }
}
