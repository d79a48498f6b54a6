package org.apache.spark.shuffle.estuary;

import io.estuary.client.write.MapOutputWriter;
import java.io.ByteArrayOutputStream;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.serializer.SerializerInstance;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Turns records into the bytes a {@link MapOutputWriter} pushes, so that every pushed batch can be read back as
 * one deserialization stream.
 *
 * <p>Serializers whose output may be cut between records and concatenated (Kryo, Spark SQL's rows) write through
 * one shared stream; each record's bytes go to its partition's buffer. Others (Java serialization) get one stream
 * per partition, closed and pushed as a batch of its own whenever it reaches the push buffer size.
 */
abstract class RecordSerializer {
  static final ClassTag<Object> OBJECT = ClassTag$.MODULE$.AnyRef();

  abstract void write(int partition, Object key, Object value);

  /** Hands everything still held to the writer. */
  abstract void flush();

  static RecordSerializer create(Serializer serializer, MapOutputWriter out, int numPartitions, int batchSize) {
    return serializer.supportsRelocationOfSerializedObjects()
        ? new Shared(serializer.newInstance(), out)
        : new PerPartition(serializer.newInstance(), out, numPartitions, batchSize);
  }

  /** A ByteArrayOutputStream whose buffer can be read without a copy. */
  static final class Bytes extends ByteArrayOutputStream {
    Bytes(int size) {
      super(size);
    }

    byte[] buffer() {
      return buf;
    }
  }

  private static final class Shared extends RecordSerializer {
    private final Bytes bytes = new Bytes(4096);
    private final SerializationStream stream;
    private final MapOutputWriter out;

    Shared(SerializerInstance ser, MapOutputWriter out) {
      this.stream = ser.serializeStream(bytes);
      this.out = out;
    }

    @Override
    void write(int partition, Object key, Object value) {
      stream.writeKey(key, OBJECT);
      stream.writeValue(value, OBJECT);
      stream.flush();
      out.write(partition, bytes.buffer(), 0, bytes.size());
      bytes.reset();
    }

    @Override
    void flush() {
      stream.close();
    }
  }

  private static final class PerPartition extends RecordSerializer {
    private final SerializerInstance ser;
    private final MapOutputWriter out;
    private final Bytes[] bytes;
    private final SerializationStream[] streams;
    private final int[] counts;
    private final int batchSize;

    PerPartition(SerializerInstance ser, MapOutputWriter out, int numPartitions, int batchSize) {
      this.ser = ser;
      this.out = out;
      this.bytes = new Bytes[numPartitions];
      this.streams = new SerializationStream[numPartitions];
      this.counts = new int[numPartitions];
      this.batchSize = batchSize;
    }

    @Override
    void write(int partition, Object key, Object value) {
      if (streams[partition] == null) {
        bytes[partition] = new Bytes(1024);
        streams[partition] = ser.serializeStream(bytes[partition]);
      }
      streams[partition].writeKey(key, OBJECT);
      streams[partition].writeValue(value, OBJECT);
      counts[partition]++;
      if (bytes[partition].size() >= batchSize) {
        streams[partition].flush();
        if (bytes[partition].size() >= batchSize) pushStream(partition);
      }
    }

    private void pushStream(int partition) {
      streams[partition].close();
      out.writeBatch(partition, bytes[partition].buffer(), 0, bytes[partition].size(), counts[partition]);
      counts[partition] = 0;
      streams[partition] = null;
      bytes[partition] = null;
    }

    @Override
    void flush() {
      for (int p = 0; p < streams.length; p++) {
        if (streams[p] != null) pushStream(p);
      }
    }
  }
}
