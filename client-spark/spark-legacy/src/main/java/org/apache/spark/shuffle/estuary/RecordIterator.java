package org.apache.spark.shuffle.estuary;

import io.estuary.client.read.ShuffleBatchReader;
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
 * The records of every batch a {@link ShuffleBatchReader} yields, each batch read as one deserialization stream
 * (Spark 1.6 / 2.4). Used by one task thread.
 */
final class RecordIterator extends AbstractIterator<Product2<Object, Object>> {
  private final ShuffleBatchReader batches;
  private final SerializerInstance ser;
  private final ReadMetrics metrics;
  private final Function<ShuffleDataLostException, RuntimeException> onDataLost;
  private Iterator<Tuple2<Object, Object>> current;
  private DeserializationStream stream;
  private boolean done;
  private long lastBytes;

  RecordIterator(ShuffleBatchReader batches, SerializerInstance ser, ReadMetrics metrics,
      Function<ShuffleDataLostException, RuntimeException> onDataLost) {
    this.batches = batches;
    this.ser = ser;
    this.metrics = metrics;
    this.onDataLost = onDataLost;
  }

  @Override
  public boolean hasNext() {
    while (!done && (current == null || !current.hasNext())) {
      if (stream != null) stream.close();
      stream = null;
      ByteBuf batch;
      long t0 = System.nanoTime();
      try {
        batch = batches.next();
      } catch (ShuffleDataLostException e) {
        throw onDataLost.apply(e);
      } catch (RemoteException e) {
        throw new IllegalStateException("reading Estuary shuffle data failed: " + e.getMessage(), e);
      }
      metrics.fetchWaitMillis((System.nanoTime() - t0) / 1_000_000);
      long fetched = batches.bytesFetched();
      if (fetched > lastBytes) {
        metrics.remoteBytesRead(fetched - lastBytes);
        metrics.remoteBlocksFetched(1);
        lastBytes = fetched;
      }
      if (batch == null) {
        done = true;
        batches.close();
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
}
