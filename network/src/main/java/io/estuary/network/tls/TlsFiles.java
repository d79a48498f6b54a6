package io.estuary.network.tls;

import io.estuary.common.config.EstuaryConf;
import io.estuary.common.config.TlsConfig;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The PEM files of one port group (certificate chain, PKCS#8 key, trust bundle; any may be absent) and their
 * contents when last read, so a reload can tell whether they changed. Immutable.
 */
final class TlsFiles {
    final TlsConfig.Group group;
    final File certFile;
    final File keyFile;
    final File trustFile;
    final boolean clientAuth;
    /** The value of {@link TlsConfig#PROVIDER}. */
    final String provider;

    private final List<byte[]> contents;

    private TlsFiles(
            TlsConfig.Group group,
            File cert,
            File key,
            File trust,
            boolean clientAuth,
            String provider,
            List<byte[]> contents) {
        this.group = group;
        this.certFile = cert;
        this.keyFile = key;
        this.trustFile = trust;
        this.clientAuth = clientAuth;
        this.provider = provider;
        this.contents = contents;
    }

    /** The group's files as configured, not read yet. */
    static TlsFiles configured(EstuaryConf conf, TlsConfig.Group group) {
        return new TlsFiles(
                group,
                file(conf.get(group.certFile)),
                file(conf.get(group.keyFile)),
                file(conf.get(group.trustFile)),
                conf.get(group.clientAuth),
                conf.get(TlsConfig.PROVIDER),
                null);
    }

    private static File file(String path) {
        return path == null || path.trim().isEmpty() ? null : new File(path.trim());
    }

    /** These files with their current contents; an unreadable file fails naming it and its key. */
    TlsFiles read() throws TlsSetupException {
        List<byte[]> now = new ArrayList<>(3);
        now.add(read(certFile, group.certFile.key()));
        now.add(read(keyFile, group.keyFile.key()));
        now.add(read(trustFile, group.trustFile.key()));
        return new TlsFiles(group, certFile, keyFile, trustFile, clientAuth, provider, now);
    }

    private static byte[] read(File f, String key) throws TlsSetupException {
        if (f == null) return null;
        try {
            return Files.readAllBytes(f.toPath());
        } catch (IOException e) {
            throw new TlsSetupException("cannot read " + f + " (" + key + "): " + e, e);
        }
    }

    /** Whether {@code other} (read later) holds different bytes in any file. */
    boolean differsFrom(TlsFiles other) {
        for (int i = 0; i < 3; i++) {
            if (!Arrays.equals(contents.get(i), other.contents.get(i))) return true;
        }
        return false;
    }

    /** The certificate chain as read, or null when not configured. */
    java.io.InputStream cert() {
        return stream(0);
    }

    /** The private key as read, or null when not configured. */
    java.io.InputStream key() {
        return stream(1);
    }

    /** The trust bundle as read, or null when not configured. */
    java.io.InputStream trust() {
        return stream(2);
    }

    private java.io.InputStream stream(int i) {
        byte[] b = contents.get(i);
        return b == null ? null : new java.io.ByteArrayInputStream(b);
    }

    /** Names the files, for messages: "certificate X, key Y". */
    String describe() {
        StringBuilder s = new StringBuilder();
        if (certFile != null) s.append("certificate ").append(certFile);
        if (keyFile != null) s.append(s.length() > 0 ? ", " : "").append("key ").append(keyFile);
        if (trustFile != null)
            s.append(s.length() > 0 ? ", " : "").append("trust bundle ").append(trustFile);
        return s.toString();
    }

    boolean hasKeyPair() {
        return certFile != null && keyFile != null;
    }
}
