package io.estuary.server.admin;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.server.admin.AdminViews.Disk;
import io.estuary.server.admin.AdminViews.MasterEntry;
import io.estuary.server.admin.AdminViews.Memory;
import io.estuary.server.admin.AdminViews.WorkerAddress;
import io.estuary.server.admin.AdminViews.WorkerStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AdminJsonTest {
    private static WorkerStatus status(WorkerAddress address) {
        Map<String, Integer> conns = new LinkedHashMap<>();
        conns.put("rpc", 1);
        conns.put("push", 2);
        conns.put("fetch", 0);
        return new WorkerStatus(
                address,
                "1.2.3",
                5,
                "ACTIVE",
                false,
                List.of("flusher of /d1"),
                List.of(new Disk("/d1", "DISK_HEALTHY", 1L << 40, 3, 12, 7)),
                new Memory(10, 1 << 30, 20, "NORMAL", false, 2),
                3,
                1,
                4,
                conns);
    }

    @Test
    void viewsParseBackEqual() {
        WorkerStatus s = status(new WorkerAddress("h", 1, 2, 3, 4));
        assertEquals(s, AdminJson.read(AdminJson.write(s), WorkerStatus.class));
        assertEquals(s, AdminJson.read(AdminJson.writePretty(s), WorkerStatus.class));
        AdminViews.Error e = new AdminViews.Error("a \"quoted\"\\ line\n\ttab \u0001 é/");
        assertEquals(e, AdminJson.read(AdminJson.write(e), AdminViews.Error.class));
    }

    @Test
    void keysAreTheComponentsInOrder() {
        assertEquals(
                "{\"mountPoint\":\"/d\",\"status\":\"DISK_FULL\",\"usableBytes\":5,\"activeSlots\":1,"
                        + "\"flushMicros\":2,\"fetchMicros\":3}",
                AdminJson.write(new Disk("/d", "DISK_FULL", 5, 1, 2, 3)));
        assertEquals(
                "{\"error\":\"no\",\"leaderId\":null,\"leader\":null}",
                AdminJson.write(new AdminViews.NotLeader("no", null, null)));
    }

    @Test
    void absentFieldsAreLeftOutWhereTheViewSaysSo() {
        // A single master has no raft endpoint; a master knows no other master's version or term.
        assertEquals(
                "{\"id\":\"\",\"rpc\":\"h:1\",\"role\":\"single\",\"self\":true,\"version\":\"v\",\"term\":0}",
                AdminJson.write(new MasterEntry("", "h:1", null, "single", true, "v", 0L)));
        assertEquals(
                "{\"id\":\"m1\",\"rpc\":\"h:1\",\"raft\":\"h:2\",\"role\":\"follower\",\"self\":false}",
                AdminJson.write(new MasterEntry("m1", "h:1", "h:2", "follower", false, null, null)));
        // A worker whose servers are not up yet has no address.
        String early = AdminJson.write(status(null));
        assertFalse(early.contains("address"), early);
        assertTrue(early.startsWith("{\"version\":\"1.2.3\","), early);
        assertNull(AdminJson.read(early, WorkerStatus.class).address());
    }

    @Test
    void unknownKeysAreIgnoredSoNewerServersStayReadable() {
        Disk d = AdminJson.read(
                "{\"mountPoint\":\"/d\",\"status\":\"DISK_SLOW\",\"usableBytes\":1,\"activeSlots\":0,"
                        + "\"flushMicros\":0,\"fetchMicros\":0,\"addedLater\":{\"x\":[1]}}",
                Disk.class);
        assertEquals(new Disk("/d", "DISK_SLOW", 1, 0, 0, 0), d);
    }

    @Test
    void badTextIsRefused() {
        for (String bad : new String[] {"", "{", "{\"a\" 1}", "[1,]", "\"open", "tru", "{1:2}"}) {
            assertThrows(IllegalArgumentException.class, () -> AdminJson.read(bad, Disk.class), bad);
            if (!bad.isEmpty()) assertThrows(IllegalArgumentException.class, () -> AdminJson.tree(bad), bad);
        }
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> AdminJson.read("{\"usableBytes\":\"many\"}", Disk.class));
        assertTrue(e.getMessage().startsWith("not a Disk: "), e.getMessage());
    }
}
