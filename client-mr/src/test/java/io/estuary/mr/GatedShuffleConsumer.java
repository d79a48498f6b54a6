package io.estuary.mr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.hadoop.mapred.RawKeyValueIterator;

/**
 * Estuary's shuffle consumer, except that a reducer's first attempt first leaves a marker ({@code <gate>.arrived})
 * and waits for the file {@code <gate>} before reading: a test learns that every map has ended (reducers start only
 * then) and can break the cluster before any reducer reads. The gate is the job key {@value #GATE}.
 */
public final class GatedShuffleConsumer<K, V> extends EstuaryShuffleConsumer<K, V> {
    static final String GATE = "test.estuary.gate";
    private Context<K, V> context;

    @Override
    public void init(Context<K, V> context) {
        super.init(context);
        this.context = context;
    }

    @Override
    public RawKeyValueIterator run() throws IOException, InterruptedException {
        String gate = context.getJobConf().get(GATE);
        if (gate != null && context.getReduceId().getId() == 0) {
            Path open = Paths.get(gate);
            Path arrived = Paths.get(gate + ".arrived");
            if (!Files.exists(arrived)) {
                try {
                    Files.createFile(arrived);
                } catch (java.nio.file.FileAlreadyExistsException e) {
                    // another reducer arrived first
                }
            }
            long deadline = System.currentTimeMillis() + 180_000;
            while (!Files.exists(open)) {
                if (System.currentTimeMillis() > deadline) throw new IOException("the test never opened " + gate);
                context.getReporter().progress();
                Thread.sleep(100);
            }
        }
        return super.run();
    }
}
