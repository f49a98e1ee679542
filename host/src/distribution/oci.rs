//! Components in OCI registries, as `wkg` (wasm-pkg) stores them: a
//! manifest whose config is `application/vnd.wasm.config.v0+json` and
//! whose one layer is the component (`application/wasm`). The protocol is
//! oci-client's; this module decides what is asked, checks what comes back
//! against the digests (the manifest's own, then the layer's) and caps
//! every size before it is read. Registries on this machine are spoken to
//! in plain http, all others in https.

use super::cosign::{self, CosignKey};
use super::reference::{is_sha256_digest, is_this_machine};
use crate::errors::FetchError;
use crate::net::error_chain;
use crate::sandbox::{MAX_COMPONENT_BYTES, sha256_hex};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::{DigestError, OciDistributionError, OciErrorCode};
use oci_client::manifest::{IMAGE_MANIFEST_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use std::collections::BTreeMap;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// The config media type of a Wasm component artifact.
pub(crate) const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// The media type of its component layer.
pub(crate) const WASM_LAYER: &str = "application/wasm";

/// A component pulled from a registry.
pub(crate) struct Pulled {
    /// The manifest's digest (`sha256:…`).
    pub manifest_digest: String,
    /// The component.
    pub bytes: Vec<u8>,
}

/// A client for `reference`'s registry.
fn client(reference: &Reference) -> Client {
    let registry = reference.resolve_registry().to_owned();
    let protocol = match is_this_machine(&registry) {
        true => ClientProtocol::HttpsExcept(vec![registry]),
        false => ClientProtocol::Https,
    };
    Client::new(ClientConfig {
        protocol,
        // A component has no platforms: an image index is not one.
        platform_resolver: None,
        connect_timeout: Some(Duration::from_secs(10)),
        read_timeout: Some(Duration::from_secs(60)),
        ..ClientConfig::default()
    })
}

/// What an error of oci-client means here: a digest that does not match
/// is a refusal, not a network failure.
fn network(reference: &Reference) -> impl Fn(OciDistributionError) -> FetchError + '_ {
    move |error| match error {
        OciDistributionError::DigestError(DigestError::VerificationError { expected, actual }) => {
            FetchError::DigestMismatch { reference: reference.whole(), expected, actual }
        }
        OciDistributionError::RequestError(error) => {
            FetchError::Network { reference: reference.whole(), message: error_chain(&error) }
        }
        error if is_not_found(&error) => FetchError::Network {
            reference: reference.whole(),
            message: "the registry has no such manifest (check the repository and the tag)".to_owned(),
        },
        error => FetchError::Network { reference: reference.whole(), message: error.to_string() },
    }
}

/// Whether the registry said it has no such manifest.
fn is_not_found(error: &OciDistributionError) -> bool {
    match error {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::RegistryError { envelope, .. } => {
            envelope.errors.iter().any(|e| matches!(e.code, OciErrorCode::ManifestUnknown | OciErrorCode::NameUnknown))
        }
        OciDistributionError::ServerError { code, .. } => *code == 404,
        _ => false,
    }
}

/// The manifest `reference` names now, and its digest (checked against the
/// reference's digest when it has one).
async fn manifest(
    client: &Client,
    reference: &Reference,
    auth: &RegistryAuth,
) -> Result<(OciImageManifest, String), FetchError> {
    let raw = client.pull_manifest_raw(reference, auth, &[OCI_IMAGE_MEDIA_TYPE, IMAGE_MANIFEST_MEDIA_TYPE]).await;
    let (raw, _) = raw.map_err(network(reference))?;
    let digest = format!("sha256:{}", sha256_hex(&raw));
    if let Some(pinned) = reference.digest()
        && pinned != digest
    {
        return Err(FetchError::DigestMismatch {
            reference: reference.whole(),
            expected: pinned.to_owned(),
            actual: digest,
        });
    }
    let manifest = serde_json::from_slice(&raw).map_err(|e| FetchError::NotAComponent {
        reference: reference.whole(),
        message: format!("its manifest is not an OCI image manifest ({e})"),
    })?;
    Ok((manifest, digest))
}

/// The component layer of `manifest`, refusing anything else.
fn component_layer(reference: &Reference, manifest: &OciImageManifest) -> Result<OciDescriptor, FetchError> {
    let not = |message: String| FetchError::NotAComponent { reference: reference.whole(), message };
    if manifest.config.media_type != WASM_CONFIG {
        return Err(not(format!("its config is `{}`, not `{WASM_CONFIG}`", manifest.config.media_type)));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(not(format!("it has {} layers, not one component", manifest.layers.len())));
    };
    if layer.media_type != WASM_LAYER {
        return Err(not(format!("its layer is `{}`, not `{WASM_LAYER}`", layer.media_type)));
    }
    if !is_sha256_digest(&layer.digest) {
        return Err(not(format!("its layer's digest `{}` is not a sha256 digest", layer.digest)));
    }
    Ok(layer.clone())
}

/// Pulls the component `reference` names: the manifest (by its digest
/// when the reference has one), then its one layer, at most
/// [`MAX_COMPONENT_BYTES`] of it, checked against the layer's digest. With
/// `key`, a signature of the manifest by it is required first.
pub(crate) async fn pull(
    reference: &Reference,
    auth: &RegistryAuth,
    key: Option<&CosignKey>,
) -> Result<Pulled, FetchError> {
    let client = client(reference);
    let (manifest, manifest_digest) = manifest(&client, reference, auth).await?;
    let layer = component_layer(reference, &manifest)?;
    if let Some(key) = key {
        verify_signature(&client, reference, auth, &manifest_digest, key).await?;
    }
    let bytes = blob(&client, reference, &layer, MAX_COMPONENT_BYTES).await?;
    let actual = format!("sha256:{}", sha256_hex(&bytes));
    if actual != layer.digest {
        return Err(FetchError::DigestMismatch { reference: reference.whole(), expected: layer.digest, actual });
    }
    Ok(Pulled { manifest_digest, bytes })
}

/// Requires a signature of `manifest_digest` by `key` in `reference`'s
/// repository (see [`cosign`]).
pub(crate) async fn verify(
    reference: &Reference,
    auth: &RegistryAuth,
    manifest_digest: &str,
    key: &CosignKey,
) -> Result<(), FetchError> {
    verify_signature(&client(reference), reference, auth, manifest_digest, key).await
}

async fn verify_signature(
    client: &Client,
    reference: &Reference,
    auth: &RegistryAuth,
    manifest_digest: &str,
    key: &CosignKey,
) -> Result<(), FetchError> {
    let tag = cosign::signature_tag(manifest_digest);
    let signatures =
        Reference::with_tag(reference.registry().to_owned(), reference.repository().to_owned(), tag.clone());
    let refused =
        |message: String| FetchError::Signature { reference: reference.whole(), key: key.file().to_owned(), message };
    let raw = client.pull_manifest_raw(&signatures, auth, &[OCI_IMAGE_MEDIA_TYPE, IMAGE_MANIFEST_MEDIA_TYPE]).await;
    let manifest: OciImageManifest = match raw {
        Ok((raw, _)) => {
            serde_json::from_slice(&raw).map_err(|e| refused(format!("`{tag}` is not an OCI image manifest ({e})")))?
        }
        Err(error) if is_not_found(&error) => {
            return Err(refused(format!("the registry has no signatures for it (no `{tag}`)")));
        }
        Err(error) => return Err(network(&signatures)(error)),
    };
    let mut reasons = Vec::new();
    for layer in manifest.layers.iter().filter(|l| l.media_type == cosign::SIMPLE_SIGNING) {
        let Some(signature) = layer.annotations.as_ref().and_then(|a| a.get(cosign::SIGNATURE_ANNOTATION)) else {
            reasons.push("a layer carries no signature".to_owned());
            continue;
        };
        let payload = blob(client, &signatures, layer, cosign::MAX_PAYLOAD_BYTES).await?;
        if format!("sha256:{}", sha256_hex(&payload)) != layer.digest {
            reasons.push("a payload does not match its digest".to_owned());
            continue;
        }
        match key.verify(&payload, signature, manifest_digest) {
            Ok(()) => return Ok(()),
            Err(reason) => reasons.push(reason),
        }
    }
    if reasons.is_empty() {
        reasons.push(format!("`{tag}` holds no cosign signature"));
    }
    reasons.dedup();
    Err(refused(format!("of the signatures at `{tag}`, {}", reasons.join("; "))))
}

/// The blob `layer`, refused when it says or turns out to be larger than
/// `max` bytes (a registry's word is checked as the bytes arrive).
async fn blob(client: &Client, reference: &Reference, layer: &OciDescriptor, max: u64) -> Result<Vec<u8>, FetchError> {
    let too_large = |size: u64| FetchError::TooLarge { reference: reference.whole(), size, max };
    let announced = u64::try_from(layer.size).unwrap_or(u64::MAX);
    if announced > max {
        return Err(too_large(announced));
    }
    let mut out = Capped { bytes: Vec::new(), max, overflowed: false };
    match client.pull_blob(reference, layer, &mut out).await {
        Ok(()) => Ok(out.bytes),
        Err(_) if out.overflowed => Err(too_large(max + 1)),
        Err(error) => Err(network(reference)(error)),
    }
}

/// A writer that takes at most `max` bytes, and says when it was offered
/// more.
struct Capped {
    bytes: Vec<u8>,
    max: u64,
    overflowed: bool,
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        if (self.bytes.len() + buf.len()) as u64 > self.max {
            self.overflowed = true;
            return Poll::Ready(Err(std::io::Error::other("larger than allowed")));
        }
        self.bytes.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Pushes `component` to `reference` (a tag) as a Wasm component artifact
/// with `annotations` on its manifest, and returns the manifest's digest.
pub(crate) async fn push(
    reference: &Reference,
    auth: &RegistryAuth,
    component: Vec<u8>,
    annotations: BTreeMap<String, String>,
) -> Result<String, FetchError> {
    let client = client(reference);
    let layer = ImageLayer::new(component, WASM_LAYER.to_owned(), None);
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer.sha256_digest()],
    });
    let config = Config::new(serde_json::to_vec(&config).expect("JSON"), WASM_CONFIG.to_owned(), None);
    let manifest = OciImageManifest::build(std::slice::from_ref(&layer), &config, Some(annotations));
    client.push(reference, &[layer], config, auth, Some(manifest)).await.map_err(network(reference))?;
    // The digest of what the registry stored, which the tag now names.
    let (_, stored) = self::manifest(&client, reference, auth).await?;
    Ok(stored)
}
