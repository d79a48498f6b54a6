package org.apache.spark.shuffle.estuary;

import io.estuary.client.read.ShuffleBatchReader;
import io.estuary.client.read.ShuffleDataLostException;
import io.estuary.network.client.RemoteException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.util.NoSuchElementException;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import scala.Product2;
import scala.Tuple2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/** The records of every batch a {@link ShuffleBatchReader} yields, each batch read as one deserialization stream. */
final class BatchRecordIterator extends AbstractIterator<Product2<Object, Object>> {
  private final ShuffleBatchReader batches;
  private final SerializerInstance ser;
  private final ShuffleReadMetricsReporter metrics;
  /** Turns lost data into the engine's way of rerunning the maps. */
  private final java.util.function.Function<ShuffleDataLostException, RuntimeException> onDataLost;
  private Iterator<Tuple2<Object, Object>> current;
  private DeserializationStream stream;
  private final Runnable onDone;
  private boolean done;
  private long reportedBytes;
  private long reportedChunks;
  private long reportedWaitMs;

  BatchRecordIterator(ShuffleBatchReader batches, SerializerInstance ser, ShuffleReadMetricsReporter metrics,
      java.util.function.Function<ShuffleDataLostException, RuntimeException> onDataLost, Runnable onDone) {
    this.batches = batches;
    this.onDone = onDone;
    this.onDataLost = onDataLost;
    this.ser = ser;
    this.metrics = metrics;
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
      } finally {
        reportFetches();
      }
      if (batch == null) {
        done = true;
        batches.close();
        onDone.run();
        return false;
      }
      stream = ser.deserializeStream(new ByteBufInputStream(batch));
      current = stream.asKeyValueIterator();
    }
    return !done;
  }

  /**
   * Adds what was fetched since the last call to the task's read metrics, as Spark's own reader does: every chunk
   * is a remote block, and fetch wait is the time spent waiting for workers (summed in nanoseconds, reported in
   * whole milliseconds so that short waits are not rounded away one by one).
   */
  private void reportFetches() {
    long bytes = batches.bytesFetched();
    long chunks = batches.chunksFetched();
    long waitMs = batches.fetchWaitNanos() / 1_000_000;
    if (bytes > reportedBytes) metrics.incRemoteBytesRead(bytes - reportedBytes);
    if (chunks > reportedChunks) metrics.incRemoteBlocksFetched(chunks - reportedChunks);
    if (waitMs > reportedWaitMs) metrics.incFetchWaitTime(waitMs - reportedWaitMs);
    reportedBytes = bytes;
    reportedChunks = chunks;
    reportedWaitMs = waitMs;
  }

  @Override
  public Product2<Object, Object> next() {
    if (!hasNext()) throw new NoSuchElementException();
    metrics.incRecordsRead(1);
    return current.next();
  }

  /** A failed read of Estuary data; the task fails with this message. */
  static final class EstuaryFetchException extends RuntimeException {
    EstuaryFetchException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
