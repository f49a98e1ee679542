//! Community plugins by reference: components in OCI registries (stored
//! as `wkg` stores them) and at https URLs, fetched into a
//! content-addressed store under the user's cache folder ([`Store`]),
//! checked against their digests and, with a cosign key, their publisher's
//! signature ([`CosignKey`]); and components published to a registry.
//!
//! This module moves verified bytes and knows nothing of plugins:
//! [`crate::project`] decides when to fetch (`assay plugin add` and
//! `update`, or a run whose pinned component is not on this machine yet)
//! and loads what it gets; [`crate::authoring`] publishes. Its calls block
//! (each runs its requests on a thread of its own), as loading a plugin
//! does.

mod cosign;
mod oci;
mod reference;
mod store;
mod url;

pub use cosign::CosignKey;
pub use reference::PluginReference;
pub use store::Store;

use crate::errors::FetchError;
use crate::sandbox::sha256_hex;
use oci_client::secrets::RegistryAuth;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A registry login: from `ASSAY_REGISTRY_USERNAME` and
/// `ASSAY_REGISTRY_PASSWORD` (a token, for most registries). Without one,
/// registries are asked anonymously.
#[derive(Clone)]
pub struct Credentials {
    /// The user name.
    pub username: String,
    /// The password or token; never printed.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("username", &self.username).finish_non_exhaustive()
    }
}

/// A component fetched and stored.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The reference with its pin: for OCI, the reference with the
    /// manifest's digest (`ghcr.io/acme/rouge:1.2.0@sha256:…`); for a URL,
    /// the URL.
    pub pinned: String,
    /// The manifest's digest (OCI only).
    pub manifest_digest: Option<String>,
    /// The component's sha256, lowercase hex.
    pub sha256: String,
    /// Where the store keeps it.
    pub path: PathBuf,
    /// The component.
    pub bytes: Vec<u8>,
}

/// Fetches, stores and publishes components.
#[derive(Clone, Debug)]
pub struct Distribution {
    store: Store,
    credentials: Option<Credentials>,
}

impl Distribution {
    /// Fetches into `store`, logging in with `credentials` where given.
    pub fn new(store: Store, credentials: Option<Credentials>) -> Distribution {
        Distribution { store, credentials }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn auth(&self) -> RegistryAuth {
        match &self.credentials {
            Some(login) => RegistryAuth::Basic(login.username.clone(), login.password.clone()),
            None => RegistryAuth::Anonymous,
        }
    }

    /// Fetches what `reference` names now (a tag resolves to the manifest
    /// it names today), verifies it (with `key`, its signature first) and
    /// stores it.
    pub fn fetch(&self, reference: &PluginReference, key: Option<&CosignKey>) -> Result<Fetched, FetchError> {
        let (bytes, manifest_digest, pinned) = match reference {
            PluginReference::Oci(oci) => {
                let pulled = run(oci::pull(oci, &self.auth(), key))?;
                let pinned = with_digest(oci, &pulled.manifest_digest).whole();
                (pulled.bytes, Some(pulled.manifest_digest), pinned)
            }
            PluginReference::Url(address) => {
                if let Some(key) = key {
                    return Err(unsigned_url(reference, key));
                }
                (run(url::download(address))?, None, address.to_string())
            }
        };
        let sha256 = sha256_hex(&bytes);
        let path = self.store.put(&bytes)?;
        if let (Some(key), Some(digest)) = (key, &manifest_digest) {
            self.store.mark_verified(&sha256, key.id(), digest)?;
        }
        Ok(Fetched { pinned, manifest_digest, sha256, path, bytes })
    }

    /// The component pinned as `sha256` (and, for OCI, by the reference's
    /// digest): from the store when it is there, else fetched by its pin.
    /// With `key`, a signature by it must have been seen on this machine
    /// for this manifest, or is looked for now.
    pub fn pinned(
        &self,
        reference: &PluginReference,
        sha256: &str,
        key: Option<&CosignKey>,
    ) -> Result<PathBuf, FetchError> {
        let manifest_digest = match reference {
            PluginReference::Oci(oci) => oci.digest().map(str::to_owned),
            PluginReference::Url(_) => None,
        };
        if let Some(key) = key {
            let Some(digest) = &manifest_digest else { return Err(unsigned_url(reference, key)) };
            if let (Some(path), PluginReference::Oci(oci)) = (self.store.get(sha256), reference) {
                if !self.store.is_verified(sha256, key.id(), digest) {
                    run(oci::verify(oci, &self.auth(), digest, key))?;
                    self.store.mark_verified(sha256, key.id(), digest)?;
                }
                return Ok(path);
            }
        } else if let Some(path) = self.store.get(sha256) {
            return Ok(path);
        }
        let fetched = self.fetch(reference, key)?;
        if fetched.sha256 != sha256 {
            return Err(FetchError::DigestMismatch {
                reference: reference.to_text(),
                expected: sha256.to_owned(),
                actual: fetched.sha256,
            });
        }
        Ok(fetched.path)
    }

    /// Pushes `component` to `reference` (an OCI reference with a tag) as
    /// a Wasm component artifact with `annotations`, and returns the
    /// manifest's digest.
    pub fn publish(
        &self,
        reference: &PluginReference,
        component: Vec<u8>,
        annotations: BTreeMap<String, String>,
    ) -> Result<String, FetchError> {
        let bad = |message: &str| FetchError::BadReference { reference: reference.to_text(), message: message.into() };
        match reference {
            PluginReference::Url(_) => Err(bad("a component is published to an OCI registry, not a URL")),
            PluginReference::Oci(oci) if oci.digest().is_some() => {
                Err(bad("publish to a tag (`…:1.2.0`): the registry gives the digest"))
            }
            PluginReference::Oci(oci) => run(oci::push(oci, &self.auth(), component, annotations)),
        }
    }
}

/// `reference` pinned to `digest`, its tag kept (oci-client's
/// `clone_with_digest` drops it).
pub fn with_digest(reference: &oci_client::Reference, digest: &str) -> oci_client::Reference {
    let (registry, repository) = (reference.registry().to_owned(), reference.repository().to_owned());
    match reference.tag() {
        Some(tag) => {
            oci_client::Reference::with_tag_and_digest(registry, repository, tag.to_owned(), digest.to_owned())
        }
        None => oci_client::Reference::with_digest(registry, repository, digest.to_owned()),
    }
}

fn unsigned_url(reference: &PluginReference, key: &CosignKey) -> FetchError {
    FetchError::Signature {
        reference: reference.to_text(),
        key: key.file().to_owned(),
        message: "cosign signatures live beside components in OCI registries, and a URL has none".into(),
    }
}

/// Runs `future` to completion on a thread of its own, with a runtime of
/// its own: callable from anywhere, an async runtime's thread included
/// (whose other tasks it does not hold up more than any blocking call).
fn run<T: Send>(future: impl Future<Output = Result<T, FetchError>> + Send) -> Result<T, FetchError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
                    FetchError::Network { reference: String::new(), message: format!("no async runtime: {e}") }
                })?;
                runtime.block_on(future)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
