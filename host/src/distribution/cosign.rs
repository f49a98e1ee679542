//! cosign signatures made with a key (`cosign sign --key cosign.key REF`):
//! what one is and how it is checked. cosign stores the signatures of a
//! manifest `sha256:H` as the layers of the manifest tagged `sha256-H.sig`
//! in the same repository; each layer is a "simple signing" payload (JSON
//! naming the signed manifest's digest) and carries, in its
//! `dev.cosignproject.cosign/signature` annotation, the base64 of an ECDSA
//! P-256 / SHA-256 signature of the payload's bytes in ASN.1 DER. A
//! signature counts when it verifies with the key and its payload names
//! the manifest being used. (Keyless signatures, certificates and the
//! transparency log are cosign's other modes; a key is the one a project
//! can pin in its repository.)

use crate::errors::FetchError;
use crate::sandbox::sha256_hex;
use base64::Engine as _;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::DecodePublicKey as _;
use std::path::{Path, PathBuf};

/// The media type of a signature layer.
pub(crate) const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a layer's signature.
pub(crate) const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The most bytes a signature payload may have (cosign's are ~250).
pub(crate) const MAX_PAYLOAD_BYTES: u64 = 64 << 10;

/// A cosign public key, read from its PEM file.
#[derive(Clone, Debug)]
pub struct CosignKey {
    key: VerifyingKey,
    file: PathBuf,
    id: String,
}

impl CosignKey {
    /// Reads `file`: a PEM `PUBLIC KEY` of ECDSA P-256, as
    /// `cosign generate-key-pair` writes `cosign.pub`.
    pub fn read(file: &Path) -> Result<CosignKey, FetchError> {
        let error = |message: String| FetchError::CosignKey { path: file.to_owned(), message };
        let bytes = std::fs::read(file).map_err(|e| error(format!("cannot read it: {e}")))?;
        let text = std::str::from_utf8(&bytes).map_err(|_| error("it is not PEM text".into()))?;
        let key = VerifyingKey::from_public_key_pem(text.trim())
            .map_err(|e| error(format!("it is not an ECDSA P-256 public key in PEM ({e})")))?;
        Ok(CosignKey { key, file: file.to_owned(), id: sha256_hex(text.trim().as_bytes()) })
    }

    /// The file it was read from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Names the key in the plugin store's record of verifications.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Whether `signature` (base64 DER) signs `payload` with this key and
    /// the payload names `manifest_digest`; the reason when not.
    pub(crate) fn verify(&self, payload: &[u8], signature: &str, manifest_digest: &str) -> Result<(), String> {
        let der = base64::engine::general_purpose::STANDARD
            .decode(signature.trim())
            .map_err(|_| "its signature annotation is not base64".to_owned())?;
        let signature = Signature::from_der(&der).map_err(|_| "its signature is not an ECDSA signature".to_owned())?;
        self.key.verify(payload, &signature).map_err(|_| "it is not signed by this key".to_owned())?;
        let payload: serde_json::Value =
            serde_json::from_slice(payload).map_err(|_| "its signed payload is not JSON".to_owned())?;
        let signed = payload.pointer("/critical/image/docker-manifest-digest").and_then(|d| d.as_str());
        match signed {
            Some(digest) if digest == manifest_digest => Ok(()),
            Some(digest) => Err(format!("it signs {digest}, another manifest")),
            None => Err("its signed payload names no manifest digest".to_owned()),
        }
    }
}

/// The tag of the signatures of `manifest_digest` (`sha256-H.sig`).
pub(crate) fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replace(':', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    // A signature cosign made of the busybox image's manifest, with the key
    // beside it (published as test data of sigstore-rs, the Rust client of
    // the sigstore project): assay reads what cosign writes.
    const COSIGN_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENptdY/l3nB0yqkXLBWkZWQwo6+cu
OSWS1X9vPavpiQOoTTGC0xX57OojUadxF1cdQmrsiReWg2Wn4FneJfa8xw==
-----END PUBLIC KEY-----";
    const COSIGN_SIGNATURE: &str =
        "MEUCIQD6q/COgzOyW0YH1Dk+CCYSt4uAhm3FDHUwvPI55zwnlwIgE0ZK58ZOWpZw8YVmBapJhBqCfdPekIknimuO0xH8Jh8=";
    const COSIGN_PAYLOAD: &str = r#"{"critical":{"identity":{"docker-reference":"registry-testing.svc.lan/busybox"},"image":{"docker-manifest-digest":"sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b"},"type":"cosign container image signature"},"optional":null}"#;
    const SIGNED_MANIFEST: &str = "sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b";
    // Another P-256 key, also from that test data.
    const OTHER_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAETJP9cqpUQsn2ggmJniWGjHdlsHzD
JsB89BPhZYch0U0hKANx5TY+ncrm0s8bfJxxHoenAEFhwhuXeb4PqIrtoQ==
-----END PUBLIC KEY-----";

    fn key(pem: &str) -> CosignKey {
        let temp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(temp.path(), pem).unwrap();
        CosignKey::read(temp.path()).unwrap()
    }

    #[test]
    fn a_signature_cosign_made_verifies_with_its_key_for_its_manifest_only() {
        let cosign = key(COSIGN_PUBLIC_KEY);
        assert_eq!(cosign.verify(COSIGN_PAYLOAD.as_bytes(), COSIGN_SIGNATURE, SIGNED_MANIFEST), Ok(()));
        let other_manifest = format!("sha256:{}", "0".repeat(64));
        let error = cosign.verify(COSIGN_PAYLOAD.as_bytes(), COSIGN_SIGNATURE, &other_manifest).unwrap_err();
        assert!(error.contains("another manifest"), "{error}");
        let altered = COSIGN_PAYLOAD.replace("busybox", "busyboy");
        assert_eq!(
            cosign.verify(altered.as_bytes(), COSIGN_SIGNATURE, SIGNED_MANIFEST),
            Err("it is not signed by this key".into())
        );
        let other = key(OTHER_PUBLIC_KEY);
        assert_eq!(
            other.verify(COSIGN_PAYLOAD.as_bytes(), COSIGN_SIGNATURE, SIGNED_MANIFEST),
            Err("it is not signed by this key".into())
        );
        assert!(cosign.verify(COSIGN_PAYLOAD.as_bytes(), "not base64!", SIGNED_MANIFEST).is_err());
        assert!(cosign.verify(COSIGN_PAYLOAD.as_bytes(), "AAAA", SIGNED_MANIFEST).is_err());
    }

    #[test]
    fn a_key_file_that_is_no_p256_public_key_is_named() {
        let temp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(temp.path(), "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n").unwrap();
        let error = CosignKey::read(temp.path()).unwrap_err().to_string();
        assert!(error.contains("not an ECDSA P-256 public key"), "{error}");
        assert!(error.contains("cosign generate-key-pair"), "{error}");
        let missing = CosignKey::read(Path::new("/nonexistent/cosign.pub")).unwrap_err().to_string();
        assert!(missing.contains("cannot read it"), "{missing}");
    }

    #[test]
    fn signatures_are_tagged_after_the_manifest_digest() {
        assert_eq!(signature_tag("sha256:abc"), "sha256-abc.sig");
    }
}
