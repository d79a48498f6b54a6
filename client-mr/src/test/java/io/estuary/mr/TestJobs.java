package io.estuary.mr;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.WritableComparable;
import org.apache.hadoop.io.WritableComparator;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Partitioner;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.KeyValueTextInputFormat;
import org.apache.hadoop.mapreduce.lib.map.TokenCounterMapper;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.partition.InputSampler;
import org.apache.hadoop.mapreduce.lib.partition.TotalOrderPartitioner;
import org.apache.hadoop.mapreduce.lib.reduce.IntSumReducer;

/**
 * The MapReduce jobs the tests run twice, on MapReduce's own shuffle and on Estuary. Each takes the job
 * configuration (which shuffle, which framework) and returns what it wrote.
 */
final class TestJobs {
    private TestJobs() {}

    /** {@code c} with Estuary as the job's shuffle (collector and consumer), through the masters at {@code masters}. */
    static Configuration withEstuary(Configuration c, String masters) {
        c.set("mapreduce.job.map.output.collector.class", EstuaryMapOutputCollector.class.getName());
        c.set("mapreduce.job.reduce.shuffle.consumer.plugin.class", EstuaryShuffleConsumer.class.getName());
        c.set("estuary.master.endpoints", masters);
        return c;
    }

    static JobOutput wordCount(Configuration conf, Path in, Path out, int reducers) throws Exception {
        return wordCount(conf, in, out, reducers, TokenCounterMapper.class);
    }

    @SuppressWarnings("rawtypes")
    static JobOutput wordCount(Configuration conf, Path in, Path out, int reducers, Class<? extends Mapper> mapper)
            throws Exception {
        return run(wordCountJob(conf, reducers, mapper), in, out);
    }

    /** Word count with a combiner, not yet given its input and output. */
    @SuppressWarnings("rawtypes")
    static Job wordCountJob(Configuration conf, int reducers, Class<? extends Mapper> mapper) throws Exception {
        Job job = Job.getInstance(conf, "word count");
        job.setJarByClass(TestJobs.class);
        job.setMapperClass(mapper);
        job.setCombinerClass(IntSumReducer.class);
        job.setReducerClass(IntSumReducer.class);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(IntWritable.class);
        job.setNumReduceTasks(reducers);
        return job;
    }

    /** A total-order sort: TotalOrderPartitioner over a sample of the keys; every part file is sorted, in order. */
    static JobOutput totalOrderSort(Configuration conf, Path in, Path out, int reducers) throws Exception {
        Job job = Job.getInstance(conf, "total order sort");
        job.setJarByClass(TestJobs.class);
        job.setInputFormatClass(KeyValueTextInputFormat.class);
        job.setMapperClass(Mapper.class);
        job.setReducerClass(Reducer.class);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(Text.class);
        job.setNumReduceTasks(reducers);
        job.setPartitionerClass(TotalOrderPartitioner.class);
        FileInputFormat.addInputPath(job, in);
        Path partitions = new Path(out.getParent(), out.getName() + "-partitions");
        TotalOrderPartitioner.setPartitionFile(job.getConfiguration(), partitions);
        InputSampler.writePartitionFile(job, new InputSampler.RandomSampler<Text, Text>(0.01, 2000, 10));
        FileOutputFormat.setOutputPath(job, out);
        return finish(job);
    }

    /** Values of each group come to the reducer sorted: the output line lists them in the order received. */
    static JobOutput secondarySort(Configuration conf, Path in, Path out) throws Exception {
        Job job = Job.getInstance(conf, "secondary sort");
        job.setJarByClass(TestJobs.class);
        job.setMapperClass(GroupValueMapper.class);
        job.setPartitionerClass(GroupPartitioner.class);
        job.setGroupingComparatorClass(GroupComparator.class);
        job.setReducerClass(ListValuesReducer.class);
        job.setMapOutputKeyClass(Text.class);
        job.setMapOutputValueClass(IntWritable.class);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(Text.class);
        job.setNumReduceTasks(4);
        return run(job, in, out);
    }

    /** An inner join of users and their orders on the reduce side: one output line per matched order. */
    static JobOutput reduceSideJoin(Configuration conf, Path in, Path out) throws Exception {
        Job job = Job.getInstance(conf, "reduce-side join");
        job.setJarByClass(TestJobs.class);
        job.setMapperClass(TagMapper.class);
        job.setReducerClass(JoinReducer.class);
        job.setMapOutputKeyClass(LongWritable.class);
        job.setMapOutputValueClass(Text.class);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(NullWritable.class);
        job.setNumReduceTasks(3);
        return run(job, in, out);
    }

    /** Lines copied by maps alone: no reducer, so no shuffle. */
    static JobOutput mapOnly(Configuration conf, Path in, Path out) throws Exception {
        Job job = Job.getInstance(conf, "map only");
        job.setJarByClass(TestJobs.class);
        job.setMapperClass(Mapper.class);
        job.setNumReduceTasks(0);
        job.setOutputKeyClass(LongWritable.class);
        job.setOutputValueClass(Text.class);
        return run(job, in, out);
    }

    static long lastMapOutputRecords;
    /** The counters of the last job {@link #finish} ran (tests run one job at a time). */
    static Counters lastCounters;

    private static JobOutput run(Job job, Path in, Path out) throws Exception {
        setPaths(job, in, out);
        return finish(job);
    }

    static void setPaths(Job job, Path in, Path out) throws IOException {
        FileInputFormat.addInputPath(job, in);
        FileOutputFormat.setOutputPath(job, out);
    }

    /** Runs the job (or waits for it, when submitted) and reads what it wrote. */
    static JobOutput finish(Job job) throws Exception {
        Path out = FileOutputFormat.getOutputPath(job);
        // The client notices the end of a job within 100 ms instead of MapReduce's default 5 s (2.5 s lost per job on
        // average; the job's Cluster reads this from the same configuration object, also once submitted).
        job.getConfiguration().setInt(Job.COMPLETION_POLL_INTERVAL_KEY, 100);
        if (!job.waitForCompletion(false)) throw new IllegalStateException(job.getJobName() + " failed");
        lastCounters = job.getCounters();
        if (job.getNumReduceTasks() > 0) {
            lastMapOutputRecords =
                    lastCounters.findCounter(TaskCounter.MAP_OUTPUT_RECORDS).getValue();
        }
        return JobOutput.read(job.getConfiguration(), out);
    }

    // ------------------------------------------------------------------ secondary sort

    public static final class GroupValueMapper extends Mapper<LongWritable, Text, Text, IntWritable> {
        private final Text key = new Text();
        private final IntWritable value = new IntWritable();

        @Override
        protected void map(LongWritable offset, Text line, Context context) throws IOException, InterruptedException {
            String[] f = line.toString().split(",");
            int v = Integer.parseInt(f[1]);
            key.set(String.format("%05d|%010d", Integer.parseInt(f[0]), v));
            value.set(v);
            context.write(key, value);
        }
    }

    static String group(Text key) {
        return key.toString().substring(0, 5);
    }

    public static final class GroupPartitioner extends Partitioner<Text, IntWritable> {
        @Override
        public int getPartition(Text key, IntWritable value, int n) {
            return (group(key).hashCode() & Integer.MAX_VALUE) % n;
        }
    }

    public static final class GroupComparator extends WritableComparator {
        public GroupComparator() {
            super(Text.class, true);
        }

        @Override
        @SuppressWarnings("rawtypes")
        public int compare(WritableComparable a, WritableComparable b) {
            return group((Text) a).compareTo(group((Text) b));
        }
    }

    public static final class ListValuesReducer extends Reducer<Text, IntWritable, Text, Text> {
        @Override
        protected void reduce(Text key, Iterable<IntWritable> values, Context context)
                throws IOException, InterruptedException {
            String g = group(key);
            StringBuilder b = new StringBuilder();
            int previous = Integer.MIN_VALUE;
            for (IntWritable v : values) {
                if (v.get() < previous) throw new IllegalStateException("group " + g + ": values out of order");
                previous = v.get();
                b.append(v.get()).append(',');
            }
            context.write(new Text(g), new Text(b.toString()));
        }
    }

    // ------------------------------------------------------------------ join

    public static final class TagMapper extends Mapper<LongWritable, Text, LongWritable, Text> {
        @Override
        protected void map(LongWritable offset, Text line, Context context) throws IOException, InterruptedException {
            String[] f = line.toString().split(",");
            context.write(new LongWritable(Long.parseLong(f[1])), new Text(f[0] + "," + f[2]));
        }
    }

    public static final class JoinReducer extends Reducer<LongWritable, Text, Text, NullWritable> {
        @Override
        protected void reduce(LongWritable user, Iterable<Text> tagged, Context context)
                throws IOException, InterruptedException {
            String name = null;
            List<String> amounts = new ArrayList<>();
            for (Text t : tagged) {
                String s = t.toString();
                if (s.startsWith("U,")) name = s.substring(2);
                else amounts.add(s.substring(2));
            }
            if (name == null) return;
            for (String a : amounts) context.write(new Text(user.get() + "," + name + "," + a), NullWritable.get());
        }
    }
}
