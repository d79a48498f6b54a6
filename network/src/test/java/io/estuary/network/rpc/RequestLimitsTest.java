package io.estuary.network.rpc;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.NetworkConfig;
import io.estuary.common.protocol.PartitionLocation;
import io.estuary.common.protocol.Request;
import io.estuary.common.protocol.ReserveSlotsRequest;
import io.estuary.common.protocol.ReviveSlotsRequest;
import io.estuary.common.protocol.WorkerAddress;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The wire-level size check: what it names, and that requests within the limits pass whole. */
class RequestLimitsTest {
    static final RequestLimits LIMITS = RequestLimits.from(
            new EstuaryConf().set(NetworkConfig.MAX_STRING_BYTES, "64").set(NetworkConfig.MAX_LIST_ENTRIES, "5"));

    private static String repeat(int n) {
        char[] c = new char[n];
        Arrays.fill(c, 'h');
        return new String(c);
    }

    private static PartitionLocation location(int p, String host) {
        return PartitionLocation.newBuilder()
                .setPartitionId(p)
                .setDisk("/disk")
                .setWorker(WorkerAddress.newBuilder().setHost(host).setRpcPort(1))
                .setPeer(PartitionLocation.newBuilder()
                        .setPartitionId(p)
                        .setWorker(WorkerAddress.newBuilder().setHost(host)))
                .build();
    }

    @Test
    void requestsWithinTheLimitsPass() {
        ReserveSlotsRequest.Builder r =
                ReserveSlotsRequest.newBuilder().setAppId("app").setUser("u");
        for (int p = 0; p < 5; p++) r.addLocations(location(p, "worker-" + p));
        assertNull(LIMITS.check(
                Request.newBuilder().setProtocolVersion(1).setReserveSlots(r).build()));
        // A packed list of one entry, and of exactly the limit.
        assertNull(LIMITS.check(Request.newBuilder()
                .setReviveSlots(ReviveSlotsRequest.newBuilder().setAppId("a").addPartitionIds(7))
                .build()));
        assertNull(LIMITS.check(Request.newBuilder()
                .setReviveSlots(ReviveSlotsRequest.newBuilder()
                        .setAppId("a")
                        .addAllPartitionIds(Arrays.asList(1, 2, 3, 4, 5))
                        .addExcludedWorkers("w:1"))
                .build()));
    }

    @Test
    void theRefusalNamesTheFieldWhereverItIs() {
        ReserveSlotsRequest.Builder r = ReserveSlotsRequest.newBuilder().setAppId("app");
        for (int p = 0; p < 3; p++) r.addLocations(location(p, p == 2 ? repeat(65) : "worker"));
        assertEquals(
                "reserve_slots.locations[2].worker.host is a string of 65 bytes, more than "
                        + "estuary.network.request.maxStringBytes (64) allows",
                LIMITS.check(Request.newBuilder().setReserveSlots(r).build()));

        assertEquals(
                "revive_slots.partition_ids has too many entries, more than estuary.network.request.maxListEntries "
                        + "(5) allows",
                LIMITS.check(Request.newBuilder()
                        .setReviveSlots(
                                ReviveSlotsRequest.newBuilder().addAllPartitionIds(Arrays.asList(1, 2, 3, 4, 5, 6)))
                        .build()));
    }
}
