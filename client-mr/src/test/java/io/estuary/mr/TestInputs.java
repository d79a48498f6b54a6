package io.estuary.mr;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/** Deterministic input files for the test jobs (same seed, same bytes). */
final class TestInputs {
    private TestInputs() {}

    /** Lines of words drawn from a skewed vocabulary, about {@code bytes} in all. */
    static void words(Configuration conf, Path file, long bytes) throws IOException {
        Random rnd = new Random(1);
        try (BufferedWriter w = open(conf, file)) {
            long written = 0;
            while (written < bytes) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < 12; i++) {
                    int word = (int) Math.abs(rnd.nextGaussian() * 2000);
                    line.append(i == 0 ? "" : " ").append("w").append(word);
                }
                w.write(line.toString());
                w.newLine();
                written += line.length() + 1;
            }
        }
    }

    /** {@code key<TAB>value} lines with random 10-letter keys and 80-letter values, about {@code bytes} in all. */
    static void sortRecords(Configuration conf, Path file, long bytes, long seed) throws IOException {
        Random rnd = new Random(seed);
        char[] key = new char[10];
        char[] value = new char[80];
        try (BufferedWriter w = open(conf, file)) {
            for (long written = 0; written < bytes; written += 92) {
                for (int i = 0; i < key.length; i++) key[i] = (char) ('A' + rnd.nextInt(26));
                for (int i = 0; i < value.length; i++) value[i] = (char) ('a' + rnd.nextInt(26));
                w.write(key);
                w.write('\t');
                w.write(value);
                w.newLine();
            }
        }
    }

    /** {@code group,value} lines: 500 groups of random ints, for the secondary sort. */
    static void groups(Configuration conf, Path file, int lines) throws IOException {
        Random rnd = new Random(3);
        try (BufferedWriter w = open(conf, file)) {
            for (int i = 0; i < lines; i++) {
                w.write(rnd.nextInt(500) + "," + rnd.nextInt(1_000_000));
                w.newLine();
            }
        }
    }

    /** Users ({@code U,id,name}) and orders ({@code O,userId,amount}) in one file, for the join. */
    static void usersAndOrders(Configuration conf, Path file, int users, int orders) throws IOException {
        Random rnd = new Random(4);
        try (BufferedWriter w = open(conf, file)) {
            for (int i = 0; i < users; i++) {
                w.write("U," + i + ",user" + i);
                w.newLine();
            }
            for (int i = 0; i < orders; i++) {
                // Some orders name users that do not exist: an inner join drops them.
                w.write("O," + rnd.nextInt(users + users / 10) + "," + rnd.nextInt(10_000));
                w.newLine();
            }
        }
    }

    static void empty(Configuration conf, Path file) throws IOException {
        open(conf, file).close();
    }

    private static BufferedWriter open(Configuration conf, Path file) throws IOException {
        FileSystem fs = file.getFileSystem(conf);
        return new BufferedWriter(new OutputStreamWriter(fs.create(file, true), StandardCharsets.UTF_8), 1 << 16);
    }
}
