package io.estuary.tests;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.client.spec.ShuffleSpec;
import io.estuary.common.config.EstuaryConf;
import io.estuary.worker.MiniCluster;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.estuary.EstuaryShuffleHandle;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/** When Estuary cannot work, the job fails with a message that says why; it never falls back to native shuffle. */
class FailLoudlyTest {

    private static String messages(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause())
            sb.append(c.getMessage()).append(" | ");
        return sb.toString();
    }

    @Test
    void noReachableMasterFailsTheJob() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        SparkSession spark = SparkSessions.start(
                SparkSessions.estuary(SparkSessions.base("local[2]", "no-master"), "127.0.0.1:" + closedPort)
                        .set("spark.estuary.client.master.wait", "1s"));
        try {
            JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
            Exception e = assertThrows(
                    Exception.class,
                    () -> sc.parallelize(Arrays.asList(1, 2, 3), 2)
                            .mapToPair(i -> new Tuple2<>(i, i))
                            .reduceByKey(Integer::sum)
                            .count());
            String m = messages(e);
            assertTrue(m.contains("no master reachable at [127.0.0.1:" + closedPort + "]"), m);
            assertTrue(m.contains("never falls back"), m);
        } finally {
            spark.stop();
        }
    }

    @Test
    void invalidClientSettingFailsAtStart() {
        Exception e = assertThrows(
                Exception.class,
                () -> SparkSessions.start(
                        SparkSessions.estuary(SparkSessions.base("local[1]", "bad-conf"), "127.0.0.1:1")
                                .set("spark.estuary.client.push.bufferSize", "lots")));
        assertTrue(
                messages(e).contains("estuary.client.push.bufferSize: 'lots' is not a valid byte size"), messages(e));
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
    }

    /**
     * What spark.executor.userClassPathFirst=true does to a shuffle handle: the task deserializes it with a class
     * loader that loads Estuary's classes a second time. The manager must refuse it and say why.
     */
    @Test
    void handleFromSecondClassLoaderIsRefusedClearly() throws Exception {
        try (MiniCluster cluster = new MiniCluster(1, 1, new EstuaryConf())) {
            SparkSession spark = SparkSessions.start(
                    SparkSessions.estuary(SparkSessions.base("local[1]", "two-loaders"), cluster.masterEndpoint()));
            try {
                JavaPairRDD<Integer, Integer> rdd = JavaSparkContext.fromSparkContext(spark.sparkContext())
                        .parallelize(Arrays.asList(1, 2, 3), 1)
                        .mapToPair(i -> new Tuple2<>(i, i));
                @SuppressWarnings({"unchecked", "rawtypes"})
                ShuffleDependency<?, ?, ?> dep = new ShuffleDependency(
                        rdd.rdd(),
                        new HashPartitioner(2),
                        spark.sparkContext().env().serializer(),
                        scala.Option.empty(),
                        scala.Option.empty(),
                        false,
                        new org.apache.spark.shuffle.ShuffleWriteProcessor(),
                        scala.reflect.ClassTag$.MODULE$.Int(),
                        scala.reflect.ClassTag$.MODULE$.Int(),
                        scala.reflect.ClassTag$.MODULE$.Int());
                ShuffleHandle handle = dep.shuffleHandle();
                assertTrue(handle instanceof EstuaryShuffleHandle);

                ShuffleHandle foreign = deserializeWithChildFirstLoader(handle);
                assertNotSame(EstuaryShuffleHandle.class, foreign.getClass());
                assertEquals(
                        EstuaryShuffleHandle.class.getName(), foreign.getClass().getName());
                IllegalStateException e = assertThrows(
                        IllegalStateException.class,
                        () -> SparkEnv.get().shuffleManager().getWriter(foreign, 0L, null, null));
                assertTrue(e.getMessage().contains("userClassPathFirst"), e.getMessage());
                assertTrue(e.getMessage().contains("never falls back"), e.getMessage());
                assertThrows(
                        IllegalStateException.class,
                        () -> SparkEnv.get().shuffleManager().getReader(foreign, 0, 1, 0, 1, null, null));
            } finally {
                spark.stop();
            }
        }
    }

    private static ShuffleHandle deserializeWithChildFirstLoader(ShuffleHandle handle) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(handle);
        }
        URL[] urls = {
            EstuaryShuffleHandle.class.getProtectionDomain().getCodeSource().getLocation(),
            ShuffleSpec.class.getProtectionDomain().getCodeSource().getLocation()
        };
        ClassLoader parent = FailLoudlyTest.class.getClassLoader();
        try (URLClassLoader childFirst = new URLClassLoader(urls, parent) {
            @Override
            protected synchronized Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                boolean ours =
                        name.startsWith("org.apache.spark.shuffle.estuary.") || name.startsWith("io.estuary.client.");
                if (!ours) return super.loadClass(name, resolve);
                Class<?> c = findLoadedClass(name);
                return c != null ? c : findClass(name);
            }
        }) {
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray())) {
                @Override
                protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
                    return Class.forName(desc.getName(), false, childFirst);
                }
            }) {
                return (ShuffleHandle) in.readObject();
            }
        }
    }
}
