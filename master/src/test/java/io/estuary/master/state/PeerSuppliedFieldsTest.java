package io.estuary.master.state;

import static org.junit.jupiter.api.Assertions.*;

import com.google.protobuf.UnknownFieldSet;
import io.estuary.common.protocol.DiskInfo;
import io.estuary.common.protocol.WorkerAddress;
import io.estuary.common.protocol.WorkerInfo;
import io.estuary.master.protocol.MasterCommand;
import io.estuary.master.protocol.WorkerRegistered;
import org.junit.jupiter.api.Test;

/** A newer worker's WorkerInfo, carrying fields this release does not know, still registers the worker. */
class PeerSuppliedFieldsTest {
    private static UnknownFieldSet newerField(int number) {
        return UnknownFieldSet.newBuilder()
                .addField(
                        number, UnknownFieldSet.Field.newBuilder().addVarint(7).build())
                .build();
    }

    /** What a worker of a later release would send: known fields, and unknown ones at two depths. */
    private static WorkerInfo newerWorker() throws Exception {
        WorkerInfo w = WorkerInfo.newBuilder()
                .setAddress(WorkerAddress.newBuilder().setHost("h").setRpcPort(1))
                .addDisks(DiskInfo.newBuilder().setMountPoint("/d1").setUnknownFields(newerField(90)))
                .setVersion("0.2.0")
                .setUnknownFields(newerField(91))
                .build();
        return WorkerInfo.parseFrom(w.toByteArray()); // as the master's parser hands it over
    }

    @Test
    void unknownFieldsAreDroppedAtEveryDepthAndKnownOnesKept() throws Exception {
        MasterCommand raw = MasterCommand.newBuilder()
                .setWorkerRegistered(WorkerRegistered.newBuilder().setWorker(newerWorker()))
                .build();
        assertThrows(CommandFormats.UnappliableCommandException.class, () -> CommandFormats.check(raw));
        MasterCommand logged = PeerSuppliedFields.withoutUnknown(raw);
        CommandFormats.check(logged); // appliable now
        WorkerInfo w = logged.getWorkerRegistered().getWorker();
        assertEquals("h", w.getAddress().getHost());
        assertEquals("/d1", w.getDisks(0).getMountPoint());
        assertEquals("0.2.0", w.getVersion());
        MasterStateMachine sm = new MasterStateMachine();
        sm.apply(logged);
    }

    @Test
    void aCommandWithoutUnknownFieldsIsReturnedAsIs() {
        MasterCommand c = MasterCommand.newBuilder()
                .setWorkerRegistered(WorkerRegistered.newBuilder()
                        .setWorker(WorkerInfo.newBuilder().setVersion("x")))
                .build();
        assertSame(c, PeerSuppliedFields.withoutUnknown(c));
    }
}
