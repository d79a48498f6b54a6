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
 * one shared stream straight into the writer's partition buffers, each record's bytes into its partition's. Others
 * (Java serialization) get one stream per partition, closed and pushed as a batch of its own whenever it reaches the
 * push buffer size.
 */
abstract class RecordSerializer {
    static final ClassTag<Object> OBJECT = ClassTag$.MODULE$.AnyRef();

    abstract void write(int partition, Object key, Object value);

    /** Hands everything still held to the writer. Writing may go on afterwards. */
    abstract void flush();

    /** Hands everything still held to the writer; nothing is written afterwards. */
    abstract void close();

    /** Bytes held here for records not yet handed to the writer (an estimate for open serialization streams). */
    abstract long bufferedBytes();

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
        private final SerializationStream stream;
        private final MapOutputWriter out;

        Shared(SerializerInstance ser, MapOutputWriter out) {
            this.stream = ser.serializeStream(out.recordStream());
            this.out = out;
        }

        @Override
        void write(int partition, Object key, Object value) {
            out.beginRecord(partition);
            stream.writeKey(key, OBJECT);
            stream.writeValue(value, OBJECT);
            stream.flush(); // the whole record is in the partition's buffer before it may be pushed
            out.endRecord();
        }

        @Override
        void flush() {
            stream.flush(); // every record is handed over as it is written; nothing is held
        }

        @Override
        void close() {
            stream.close();
        }

        @Override
        long bufferedBytes() {
            return 0; // counted in the writer's buffers
        }
    }

    /**
     * What an open serialization stream holds beyond the bytes it has written out (Java serialization keeps a block
     * buffer and handle tables per stream): an estimate, so that thousands of open streams count.
     */
    static final long STREAM_OVERHEAD = 2048;

    private static final class PerPartition extends RecordSerializer {
        private final SerializerInstance ser;
        private final MapOutputWriter out;
        private final Bytes[] bytes;
        private final SerializationStream[] streams;
        private final int[] counts;
        private final int batchSize;
        /** Sum of the open streams' buffered bytes plus {@link #STREAM_OVERHEAD} each. */
        private long held;

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
                held += STREAM_OVERHEAD;
            }
            int before = bytes[partition].size();
            streams[partition].writeKey(key, OBJECT);
            streams[partition].writeValue(value, OBJECT);
            counts[partition]++;
            if (bytes[partition].size() >= batchSize) {
                streams[partition].flush();
                if (bytes[partition].size() >= batchSize) {
                    held += bytes[partition].size() - before;
                    pushStream(partition);
                    return;
                }
            }
            held += bytes[partition].size() - before;
        }

        @Override
        long bufferedBytes() {
            return held;
        }

        @Override
        void close() {
            flush();
        }

        private void pushStream(int partition) {
            held -= bytes[partition].size() + STREAM_OVERHEAD;
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
