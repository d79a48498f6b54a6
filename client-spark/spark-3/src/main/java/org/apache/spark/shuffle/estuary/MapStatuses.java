package org.apache.spark.shuffle.estuary;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.storage.BlockManagerId;

/**
 * Creates Spark's {@link MapStatus} on every Spark this source runs on. Spark 3.x and 4.0 have
 * {@code MapStatus.apply(location, sizes, mapTaskId)}; Spark 4.1 replaced it with one that also takes a checksum of
 * the map's output (a Scala default argument, so no call compiled against one line links on the other). The method
 * is found once, when this class loads; the checksum passed is 0, Spark's default ("not computed"). Stateless and
 * thread-safe.
 */
final class MapStatuses {
    private MapStatuses() {}

    /** (BlockManagerId, long[], long) -> MapStatus, bound to Spark's MapStatus object. */
    private static final MethodHandle APPLY = findApply();

    private static MethodHandle findApply() {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        MethodType withoutChecksum =
                MethodType.methodType(MapStatus.class, BlockManagerId.class, long[].class, long.class);
        try {
            return lookup.findVirtual(MapStatus$.class, "apply", withoutChecksum)
                    .bindTo(MapStatus$.MODULE$);
        } catch (NoSuchMethodException e) {
            try {
                MethodHandle withChecksum = lookup.findVirtual(
                                MapStatus$.class, "apply", withoutChecksum.appendParameterTypes(long.class))
                        .bindTo(MapStatus$.MODULE$);
                return MethodHandles.insertArguments(withChecksum, 3, 0L);
            } catch (NoSuchMethodException | IllegalAccessException e2) {
                e2.addSuppressed(e);
                throw new LinkageError("this Spark has no MapStatus.apply that Estuary knows", e2);
            }
        } catch (IllegalAccessException e) {
            throw new LinkageError("MapStatus.apply is not accessible", e);
        }
    }

    static MapStatus create(BlockManagerId location, long[] partitionLengths, long mapTaskId) {
        try {
            return (MapStatus) APPLY.invokeExact(location, partitionLengths, mapTaskId);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t); // MapStatus.apply declares no checked exception
        }
    }
}
