package io.estuary.worker;

import static io.estuary.testing.Waits.waitFor;
import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.WorkerConfig;
import io.estuary.common.protocol.Empty;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerHeartbeatResponse;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.network.client.TransportClientFactory;
import io.estuary.network.rpc.ControlRpcHandler;
import io.estuary.network.rpc.MasterClient;
import io.estuary.network.server.TransportServer;
import io.estuary.worker.partition.PartitionRegistry;
import io.estuary.worker.storage.DiskHangInjection;
import io.estuary.worker.storage.StorageManager;
import io.netty.channel.Channel;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The master tells a worker that a shuffle with files on two disks expired, and one of the disks hangs: the
 * worker's heartbeats go on (a worker whose heartbeats stop is declared lost and all its shuffles with it), the
 * healthy disk's files go at once, the hung disk's once it answers again. Runs the real heartbeater, registry and
 * storage against a master played by a control handler that answers every heartbeat with the expired shuffle.
 */
class ExpiredShuffleDeletionTest {
    private static final String APP = "app-expired";
    private static final String KEY = APP + "-0";

    /** A master that counts heartbeats and names the shuffle {@code expired} (if not null) expired in every answer. */
    static final class ExpiringMaster extends ControlRpcHandler {
        final AtomicInteger heartbeats = new AtomicInteger();
        private final String expired;

        ExpiringMaster(String expired) {
            super("fake-master");
            this.expired = expired;
        }

        @Override
        protected void handle(Channel channel, Request request, Reply reply) {
            switch (request.getPayloadCase()) {
                case REGISTER_WORKER:
                    reply.ok(Empty.getDefaultInstance());
                    break;
                case WORKER_HEARTBEAT:
                    heartbeats.incrementAndGet();
                    WorkerHeartbeatResponse.Builder r =
                            WorkerHeartbeatResponse.newBuilder().setRegistered(true);
                    if (expired != null) r.addExpiredShuffleKeys(expired);
                    reply.ok(r.build());
                    break;
                default:
                    throw unsupported(request);
            }
        }
    }

    @Test
    void deletingAnExpiredShuffleOnAHungDiskDoesNotStopHeartbeats() throws Exception {
        Path root = Files.createTempDirectory("estuary-expiry");
        File hung = root.resolve("disk0").toFile();
        File healthy = root.resolve("disk1").toFile();
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.STORAGE_DIRS, hung + "," + healthy)
                .set(WorkerConfig.DISK_RESERVE, "0")
                .set(WorkerConfig.DISK_CHECK_INTERVAL, "1h");
        ExpiringMaster fakeMaster = new ExpiringMaster(KEY);
        StorageManager storage = new StorageManager(conf);
        TransportServer masterServer = new TransportServer(conf, "fake-master", "127.0.0.1", 0, fakeMaster);
        TransportClientFactory clients = new TransportClientFactory(conf, "heartbeat-test");
        PartitionRegistry registry = new PartitionRegistry(storage);
        MasterHeartbeater heartbeater = heartbeater(clients, masterServer, registry);
        File onHung = new File(hung.getAbsoluteFile(), APP + "/0/0-0.data");
        File onHealthy = new File(healthy.getAbsoluteFile(), APP + "/0/1-0.data");
        try {
            registry.reserve(APP, 0, List.of(location(0, hung), location(1, healthy)));
            for (File f : new File[] {onHung, onHealthy}) {
                Files.createDirectories(f.getParentFile().toPath());
                Files.write(f.toPath(), new byte[4096]);
            }
            DiskHangInjection.hang(hung);
            heartbeater.start();
            waitFor(() -> fakeMaster.heartbeats.get() >= 10, 60_000, "heartbeats go on after the expiry");
            assertFalse(registry.hasShuffle(KEY), "the expired shuffle is forgotten");
            waitFor(() -> !onHealthy.exists(), 30_000, "the healthy disk deletes its files");
            assertTrue(onHung.exists(), "the hung disk has not deleted anything yet");
        } finally {
            DiskHangInjection.heal(hung);
        }
        try {
            waitFor(() -> !onHung.exists(), 30_000, "the disk deletes its files once it answers again");
        } finally {
            heartbeater.close();
            clients.close();
            masterServer.close();
            storage.close();
        }
    }

    /**
     * A shuffle key the master refuses (an empty application id, as a release before id validation could record and
     * recover) is left out of the reports instead of failing every heartbeat (the master would declare the worker lost).
     */
    @Test
    void aShuffleKeyTheMasterRefusesIsNotReportedAndHeartbeatsGoOn() throws Exception {
        Path root = Files.createTempDirectory("estuary-badkey");
        File disk = root.resolve("disk0").toFile();
        EstuaryConf conf = new EstuaryConf()
                .set(WorkerConfig.STORAGE_DIRS, disk.toString())
                .set(WorkerConfig.DISK_RESERVE, "0")
                .set(WorkerConfig.DISK_CHECK_INTERVAL, "1h");
        ExpiringMaster fakeMaster = new ExpiringMaster(null);
        StorageManager storage = new StorageManager(conf);
        TransportServer masterServer = new TransportServer(conf, "fake-master", "127.0.0.1", 0, fakeMaster);
        TransportClientFactory clients = new TransportClientFactory(conf, "heartbeat-test");
        PartitionRegistry registry = new PartitionRegistry(storage);
        MasterHeartbeater heartbeater = heartbeater(clients, masterServer, registry);
        try {
            registry.reserve("", 0, List.of(location(0, disk)));
            registry.reserve(APP, 0, List.of(location(0, disk)));
            heartbeater.start();
            waitFor(() -> fakeMaster.heartbeats.get() >= 5, 60_000, "heartbeats answered despite the bad key");
        } finally {
            heartbeater.close();
            clients.close();
            masterServer.close();
            storage.close();
        }
    }

    /** The real heartbeater of a worker at 127.0.0.1, reporting every 100 ms to {@code masterServer}. */
    private static MasterHeartbeater heartbeater(
            TransportClientFactory clients, TransportServer masterServer, PartitionRegistry registry) {
        return new MasterHeartbeater(
                new MasterClient(clients, Collections.singletonList("127.0.0.1:" + masterServer.port())),
                () -> WorkerInfo.newBuilder()
                        .setAddress(WorkerAddress.newBuilder()
                                .setHost("127.0.0.1")
                                .setRpcPort(1)
                                .setPushPort(2)
                                .setFetchPort(3))
                        .build(),
                registry,
                100);
    }

    private static PartitionLocation location(int partition, File disk) {
        return PartitionLocation.newBuilder()
                .setPartitionId(partition)
                .setEpoch(0)
                .setDisk(disk.getAbsolutePath())
                .build();
    }
}
