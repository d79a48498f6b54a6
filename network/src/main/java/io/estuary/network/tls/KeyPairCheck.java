package io.estuary.network.tls;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Base64;
import java.util.Collection;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks that a group's private key belongs to the first certificate of its chain. Netty builds a context from a
 * certificate and a key that do not match, and every handshake with it then fails; a renewal caught between writing
 * its certificate and its key is such a pair, so a reload must refuse it (and keep the previous pair) rather than
 * serve it for a whole reload interval. Proves the match by signing with the key and verifying with the
 * certificate's public key. Stateless.
 */
final class KeyPairCheck {
    private static final Pattern PKCS8 =
            Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    private KeyPairCheck() {}

    /**
     * Fails when the key is not the certificate's. Keys or algorithms this check cannot read (left to Netty, which
     * reports its own errors) pass.
     */
    static void check(TlsFiles f) throws TlsSetupException {
        PublicKey certificateKey;
        byte[] der;
        try {
            certificateKey = leafKey(f);
            der = pkcs8(f);
        } catch (GeneralSecurityException | IllegalArgumentException | java.util.NoSuchElementException e) {
            return; // unreadable here: Netty's own parsing says why
        }
        String algorithm = signatureAlgorithm(certificateKey.getAlgorithm());
        if (der == null || algorithm == null) return;
        boolean matches;
        try {
            // A key of another algorithm than the certificate's does not parse as one of its kind: a mismatch too.
            PrivateKey key = KeyFactory.getInstance(certificateKey.getAlgorithm())
                    .generatePrivate(new java.security.spec.PKCS8EncodedKeySpec(der));
            byte[] probe = new byte[32];
            new SecureRandom().nextBytes(probe);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificateKey);
            verifier.update(probe);
            matches = verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            matches = false; // e.g. a key of another curve
        }
        if (!matches) {
            throw new TlsSetupException(
                    "the TLS files of the " + f.group.name + " group (" + f.describe() + ") cannot be used: the key ("
                            + f.group.keyFile.key() + ") is not the key of the first certificate in "
                            + f.group.certFile.key() + " (one replaced without the other?)",
                    null);
        }
    }

    private static PublicKey leafKey(TlsFiles f) throws GeneralSecurityException {
        Collection<? extends Certificate> chain =
                CertificateFactory.getInstance("X.509").generateCertificates(f.cert());
        return chain.iterator().next().getPublicKey();
    }

    /** The PKCS#8 key's DER, or null when the file holds none in that form. */
    private static byte[] pkcs8(TlsFiles f) {
        String pem;
        try (java.io.InputStream in = f.key()) {
            pem = new String(readAll(in), StandardCharsets.US_ASCII);
        } catch (java.io.IOException e) {
            return null;
        }
        Matcher m = PKCS8.matcher(pem);
        if (!m.find()) return null;
        return Base64.getMimeDecoder().decode(m.group(1));
    }

    private static byte[] readAll(java.io.InputStream in) throws java.io.IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
        return out.toByteArray();
    }

    private static String signatureAlgorithm(String keyAlgorithm) {
        switch (keyAlgorithm) {
            case "EC":
                return "SHA256withECDSA";
            case "RSA":
                return "SHA256withRSA";
            case "DSA":
                return "SHA256withDSA";
            default:
                return null; // not checked (EdDSA: the curve decides the algorithm)
        }
    }
}
