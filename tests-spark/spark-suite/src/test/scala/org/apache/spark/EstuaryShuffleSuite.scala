package org.apache.spark

import java.io.File
import java.nio.file.Path

import scala.collection.JavaConverters._

import _root_.io.estuary.common.config.EstuaryConf
import _root_.io.estuary.network.testing.{FileLeakDetector, LeakCheckExtension, RecordingLeakDetector}
import _root_.io.estuary.testing.Waits
import _root_.io.estuary.worker.MiniCluster
import org.scalatest.BeforeAndAfterAll

import org.apache.spark.internal.config.SHUFFLE_MANAGER
import org.apache.spark.util.Utils

/**
 * Spark's own [[ShuffleSuite]] (from Spark's spark-core test jar) with Estuary as the shuffle manager, against a real
 * master and worker on loopback. Its jobs run in local mode and on local-cluster executors (separate JVMs given this
 * JVM's class path). Every test of the suite runs except those that look for Spark's own shuffle files on the local
 * disk, which Estuary never writes (see [[excluded]]). A Netty buffer leaked (paranoid detection, the JUnit tests'
 * RecordingLeakDetector) fails the suite, as it fails a JUnit test class; so does one leaked in a local-cluster
 * executor, where the Estuary client pushes and fetches in its own JVM: executors run FileLeakDetector, which
 * writes their leaks where this JVM reads them once they have exited.
 */
class EstuaryShuffleSuite extends ShuffleSuite with BeforeAndAfterAll {
  EstuaryShuffleSuite.leakDetection
  private val manager = "org.apache.spark.shuffle.estuary.EstuaryShuffleManager"
  private var cluster: MiniCluster = _

  // A def, not a val: ShuffleSuite registers its tests while it is constructed, before this class's fields are set.
  override protected def excluded: Seq[String] = Seq(
    // Asserts that the block manager's disk holds files after a shuffle: Spark's shuffle files.
    "shuffle with different compression settings (SPARK-3426)",
    // Deletes Spark's local shuffle data and index files of map 0 and expects the stage to rerun.
    "[SPARK-4085] rerun map stage if reduce stage cannot find its local shuffle file",
    // Asserts that Spark's local shuffle data and index files of map 0 exist after the job.
    "cannot find its local shuffle file if no execution of the stage and rerun shuffle",
    // Corrupts Spark's local shuffle data file of map 0 and expects Spark's checksum to diagnose a disk issue.
    "SPARK-36206: shuffle checksum detect disk corruption")

  private val sparkHome = new File(sys.props.getOrElse("spark.test.home", sys.env("SPARK_HOME")))
  /** Tests that ran on local-cluster executors: then executors must have tracked buffers. */
  private var localClusterTests = 0
  private val executorLeaks: Path =
    new File(sys.props.getOrElse("estuary.executor.leakReports", "target/executor-leak-reports")).toPath

  override def beforeAll(): Unit = {
    val why = RecordingLeakDetector.notInstalledReason()
    if (why != null) throw new IllegalStateException("leak detection is not working: " + why)
    super.beforeAll()
    cluster = new MiniCluster(1, 1, new EstuaryConf())
    // local-cluster's workers start executors from SPARK_HOME, which needs only a jars/ folder here.
    new File(sparkHome, "jars").mkdirs()
    Utils.deleteRecursively(executorLeaks.toFile)
    conf.set(SHUFFLE_MANAGER, manager)
      .set("spark.estuary.master.endpoints", cluster.masterEndpoint())
      .set("spark.driver.host", "127.0.0.1")
      .set("spark.driver.bindAddress", "127.0.0.1")
      .set("spark.ui.enabled", "false")
      .set("spark.executor.extraClassPath", sys.props("java.class.path"))
      .set("spark.executor.extraJavaOptions",
        sys.props.getOrElse("estuary.spark.opens", "") + " " + FileLeakDetector.jvmOptions(executorLeaks))
  }

  override def afterAll(): Unit = {
    try {
      if (cluster != null) cluster.close()
    } finally {
      super.afterAll()
    }
    EstuaryShuffleSuite.failOnLeaks("EstuaryShuffleSuite")
    EstuaryShuffleSuite.failOnExecutorLeaks(executorLeaks, localClusterTests)
  }

  override def afterEach(): Unit = {
    if (sc != null && sc.master.startsWith("local-cluster")) localClusterTests += 1
    super.afterEach()
  }

  test("the suite's shuffles go through Estuary") {
    sc = new SparkContext("local", "test", conf)
    assert(sc.env.shuffleManager.getClass.getName === manager)
    val counts = sc.parallelize(1 to 1000, 4).map(x => (x % 10, x)).reduceByKey(_ + _).collect().toMap
    assert(counts === (1 to 1000).groupBy(_ % 10).map { case (k, v) => k -> v.sum })
    assert(cluster.dataFileCount() > 0, "no partition file on the worker: Estuary did not shuffle")
  }
}

object EstuaryShuffleSuite {
  /** Installs the recording detector: before Netty makes its own, i.e. before the first buffer class is loaded. */
  lazy val leakDetection: Unit = RecordingLeakDetector.install()

  /** Throws naming the first Netty buffer leaked so far (after a garbage collection), if any. */
  def failOnLeaks(where: String): Unit = {
    val leaks = LeakCheckExtension.leaksNow()
    if (!leaks.isEmpty) {
      throw new AssertionError(leaks.size() + " Netty buffer leak(s) found after " + where +
        " (paranoid leak detection); the first:\n" + leaks.get(0))
    }
  }

  /**
   * Throws naming the first Netty buffer leaked in a local-cluster executor, once every executor JVM has exited (each
   * reports what it leaked at exit); or when tests ran on local-cluster executors but no executor tracked buffers with
   * the FileLeakDetector, so leaks would go unnoticed.
   */
  def failOnExecutorLeaks(reports: Path, localClusterTests: Int): Unit = {
    val pids = FileLeakDetector.trackedProcesses(reports).asScala.map(_.longValue)
    Waits.waitFor(() => pids.forall(p => !ProcessHandle.of(p).filter(_.isAlive).isPresent), 60000L,
      "the executor JVMs " + pids.mkString(", ") + " to exit")
    val leaks = FileLeakDetector.leaks(reports)
    if (!leaks.isEmpty) {
      throw new AssertionError(leaks.size() + " Netty buffer leak(s) found in local-cluster executors " +
        "(paranoid leak detection, reports in " + reports + "); the first:\n" + leaks.get(0))
    }
    if (localClusterTests > 0 && pids.isEmpty) {
      throw new IllegalStateException("leak detection is not working in the executors: " + localClusterTests +
        " tests ran on local-cluster executors, none tracked buffers with " + classOf[FileLeakDetector[_]].getName)
    }
    println(s"EXECUTOR LEAK CHECK: $localClusterTests local-cluster tests, ${pids.size} executor JVMs tracked buffers, " +
      "no leak")
  }
}
