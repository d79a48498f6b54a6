package org.apache.spark.shuffle.estuary;

import io.estuary.client.engine.MeteredBatches;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.network.client.RemoteException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.util.NoSuchElementException;
import java.util.function.Function;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializerInstance;
import scala.Product2;
import scala.Tuple2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * The records of every batch a reduce task reads, each batch read as one deserialization stream; what was fetched
 * goes to the task's read metrics as it comes ({@link MeteredBatches}), each record as it is returned. Shared by
 * every Spark line. Used by one task thread.
 */
final class SparkRecordIterator extends AbstractIterator<Product2<Object, Object>> {
    private final MeteredBatches batches;
    private final SerializerInstance ser;
    private final SparkReadMetrics metrics;
    /** Turns lost data into the engine's way of rerunning the maps. */
    private final Function<ShuffleDataLostException, RuntimeException> onDataLost;

    private final Runnable onDone;
    private Iterator<Tuple2<Object, Object>> current;
    private DeserializationStream stream;
    private boolean done;

    /** @param onDone runs once all is read (the batches are closed by then) */
    SparkRecordIterator(
            MeteredBatches batches,
            SerializerInstance ser,
            SparkReadMetrics metrics,
            Function<ShuffleDataLostException, RuntimeException> onDataLost,
            Runnable onDone) {
        this.batches = batches;
        this.ser = ser;
        this.metrics = metrics;
        this.onDataLost = onDataLost;
        this.onDone = onDone;
    }

    @Override
    public boolean hasNext() {
        while (!done && (current == null || !current.hasNext())) {
            if (stream != null) stream.close();
            stream = null;
            ByteBuf batch;
            try {
                batch = batches.next();
            } catch (ShuffleDataLostException e) {
                throw onDataLost.apply(e);
            } catch (RemoteException e) {
                throw new EstuaryFetchException("reading shuffle data failed: " + e.getMessage(), e);
            }
            if (batch == null) {
                done = true;
                onDone.run();
                return false;
            }
            stream = ser.deserializeStream(new ByteBufInputStream(batch));
            current = stream.asKeyValueIterator();
        }
        return !done;
    }

    @Override
    public Product2<Object, Object> next() {
        if (!hasNext()) throw new NoSuchElementException();
        metrics.recordsRead(1);
        return current.next();
    }

    /** A failed read of Estuary data; the task fails with this message. */
    static final class EstuaryFetchException extends RuntimeException {
        EstuaryFetchException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
