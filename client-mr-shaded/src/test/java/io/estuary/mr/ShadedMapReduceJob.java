package io.estuary.mr;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.map.TokenCounterMapper;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.reduce.IntSumReducer;

/**
 * Run by {@link ShadedMapReduceJarTest} in a JVM whose only Estuary classes are the shaded MapReduce jar's: a word
 * count under LocalJobRunner on MapReduce's own shuffle, then through Estuary (the master at args[0]); the two
 * outputs must be equal line for line. Prints "output OK" and where the collector came from.
 */
public final class ShadedMapReduceJob {
    private ShadedMapReduceJob() {}

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("estuary-mr-shaded");
        Path input = dir.resolve("in/words.txt");
        Files.createDirectories(input.getParent());
        Random random = new Random(42);
        try (Writer w = Files.newBufferedWriter(input, StandardCharsets.UTF_8)) {
            for (int line = 0; line < 60_000; line++) {
                for (int i = 0; i < 8; i++) w.write("w" + (int) (Math.abs(random.nextGaussian()) * 3000) + " ");
                w.write('\n');
            }
        }
        Configuration base = new Configuration();
        base.set("fs.defaultFS", "file:///");
        base.set("mapreduce.framework.name", "local");
        base.set("mapreduce.cluster.local.dir", dir.resolve("local").toString());
        base.set("mapreduce.jobtracker.staging.root.dir", dir.resolve("staging").toString());
        base.setInt("mapreduce.local.map.tasks.maximum", 2);
        base.setInt("mapreduce.task.io.sort.mb", 2); // several spills per map
        base.setLong("mapreduce.input.fileinputformat.split.maxsize", 1L << 20);
        base.setInt(Job.COMPLETION_POLL_INTERVAL_KEY, 100);

        List<String> expected = wordCount(new Configuration(base), dir, "native");
        Configuration estuary = new Configuration(base);
        estuary.set("mapreduce.job.map.output.collector.class", "io.estuary.mr.EstuaryMapOutputCollector");
        estuary.set("mapreduce.job.reduce.shuffle.consumer.plugin.class", "io.estuary.mr.EstuaryShuffleConsumer");
        estuary.set("estuary.master.endpoints", args[0]);
        List<String> actual = wordCount(estuary, dir, "estuary");

        System.out.println("collector loaded from "
                + Class.forName("io.estuary.mr.EstuaryMapOutputCollector")
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation());
        System.out.println("netty inside the client: "
                + Class.forName("io.estuary.network.client.TransportClient")
                        .getDeclaredField("channel")
                        .getType()
                        .getName());
        if (expected.isEmpty() || !expected.equals(actual)) {
            System.out.println("output MISMATCH: native " + expected.size() + " lines, Estuary " + actual.size());
            System.exit(1);
        }
        System.out.println("output OK: " + actual.size() + " words, as native MapReduce counts them");
    }

    /** Word count with 3 reducers; returns its output lines, sorted. */
    private static List<String> wordCount(Configuration conf, Path dir, String name) throws Exception {
        Job job = Job.getInstance(conf, "shaded jar word count (" + name + ")");
        job.setJarByClass(ShadedMapReduceJob.class);
        job.setMapperClass(TokenCounterMapper.class);
        job.setCombinerClass(IntSumReducer.class);
        job.setReducerClass(IntSumReducer.class);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(IntWritable.class);
        job.setNumReduceTasks(3);
        org.apache.hadoop.fs.Path out =
                new org.apache.hadoop.fs.Path(dir.resolve("out-" + name).toUri());
        FileInputFormat.addInputPath(
                job, new org.apache.hadoop.fs.Path(dir.resolve("in").toUri()));
        FileOutputFormat.setOutputPath(job, out);
        if (!job.waitForCompletion(false)) throw new IllegalStateException(name + " word count failed");
        long mapOutput =
                job.getCounters().findCounter(TaskCounter.MAP_OUTPUT_RECORDS).getValue();
        System.out.println(name + ": map output records " + mapOutput);
        if (mapOutput == 0) throw new IllegalStateException(name + ": the maps wrote nothing");
        List<String> lines = new ArrayList<>();
        FileSystem fs = out.getFileSystem(conf);
        for (FileStatus part : fs.listStatus(out)) {
            if (!part.getPath().getName().startsWith("part-")) continue;
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(fs.open(part.getPath()), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) lines.add(line);
            } catch (IOException e) {
                throw new IOException("reading " + part.getPath(), e);
            }
        }
        Collections.sort(lines);
        return lines;
    }
}
