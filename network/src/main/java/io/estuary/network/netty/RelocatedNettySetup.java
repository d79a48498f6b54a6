package io.estuary.network.netty;

import io.netty.buffer.ByteBuf;

/**
 * Settings for the copy of Netty that Estuary's client jars carry under a relocated package, which the engine's own
 * JVM options never name (Spark sets {@code io.netty.*} properties for its Netty, not for ours).
 *
 * <p>Direct memory without a Cleaner: where the JVM opens {@code java.nio} to unnamed modules (Spark's JVMs do on
 * Java 9 and later, for Spark's own Netty), Netty may allocate a direct pool chunk with a plain malloc. Otherwise each
 * new chunk is a {@code ByteBuffer.allocateDirect}: zeroed by the JDK before use and tracked by the garbage collector.
 * A task that fetches a gigabyte makes hundreds of chunks; measured on a 1 GB sort, the zeroing alone took more than
 * a CPU second of the executor's Netty threads. Netty reads the setting once, when its {@code PlatformDependent}
 * initializes, so the engines' entry points call {@link #apply} before anything of Estuary's runs. Nothing changes
 * where Netty is not relocated (the unshaded modules share Netty with their host) or where the setting is given.
 * Stateless; thread-safe (two first calls at once set the same value).
 */
public final class RelocatedNettySetup {
    private RelocatedNettySetup() {}

    /** In the client jars this literal is relocated with Netty, so it names the relocated copy's property. */
    private static final String TRY_REFLECTION = "io.netty.tryReflectionSetAccessible";

    /**
     * Netty's own package name, made at run time: relocation rewrites every constant string that names a relocated
     * package (and javac would fold {@code "io" + ".netty."} into one such constant).
     */
    private static final String UNRELOCATED_PACKAGE = String.join(".", "io", "netty", "");

    /** Applies the settings, once per JVM; later calls do nothing. */
    public static void apply() {
        if (!relocated()) return;
        if (System.getProperty(TRY_REFLECTION) == null) System.setProperty(TRY_REFLECTION, "true");
    }

    /** Whether this Netty is Estuary's relocated copy. */
    public static boolean relocated() {
        return !ByteBuf.class.getName().startsWith(UNRELOCATED_PACKAGE);
    }

    /** The name of the property {@link #apply} sets, as this copy of Netty reads it. */
    public static String tryReflectionProperty() {
        return TRY_REFLECTION;
    }
}
