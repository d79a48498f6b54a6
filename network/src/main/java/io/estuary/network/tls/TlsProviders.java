package io.estuary.network.tls;

import io.estuary.common.config.TlsConfig;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;

/**
 * Resolves {@link TlsConfig#PROVIDER} to a Netty provider. OpenSSL (BoringSSL from netty-tcnative) spends far less
 * CPU per encrypted byte than the JDK's engine; it is present where the class path carries netty-tcnative for this
 * platform (the servers' does) and absent in the shaded client jars, which carry no native library. Stateless.
 */
final class TlsProviders {
    private TlsProviders() {}

    /** The provider {@code setting} (auto, openssl or jdk) names here; openssl where it cannot load fails. */
    static SslProvider choose(String setting) throws TlsSetupException {
        switch (setting) {
            case "jdk":
                return SslProvider.JDK;
            case "openssl":
                if (!OpenSsl.isAvailable()) {
                    throw new TlsSetupException(
                            TlsConfig.PROVIDER.key() + " is openssl but OpenSSL cannot be loaded here ("
                                    + OpenSsl.unavailabilityCause()
                                    + "): put netty-tcnative-boringssl-static for this platform on the class path, "
                                    + "or set it to auto or jdk",
                            OpenSsl.unavailabilityCause());
                }
                return SslProvider.OPENSSL;
            default:
                return OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        }
    }
}
