//! The compile cache: components compiled once per machine, not per run.
//!
//! An artifact is stored as `<key>.cwasm`, where the key is the sha256 of
//! the component's sha256 and of the engine's compatibility hash (so another
//! wasmtime version or configuration never sees it). The file is an
//! HMAC-SHA256 tag followed by the artifact; the tag is taken under the
//! per-user secret key (see `cache_key`) over the artifact, the
//! component's sha256 and the compatibility hash. A load reads the file,
//! verifies the tag, and only then deserializes from the bytes it verified
//! (not from the file again, which another process could swap in between).
//! So a file that anyone without the key made — a planted artifact, even a
//! valid one compiled from another component, or a torn write — is ignored
//! and rebuilt: native code runs only if this user's assay compiled it from
//! these very component bytes.
//!
//! The directory is made 0700 and files are written 0600 (see
//! `private_files`); a directory owned by someone else or writable by group
//! or others is not used (warned once; components are then compiled in
//! memory), and neither is a cache whose key file is refused.

use crate::cache_key::{CacheAccess, MAC_LEN, default_key_file};
use crate::private_files::{self, hex};
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// What the compile cache's tags are for (the answer cache uses the same key).
const DOMAIN: &str = "assay compile cache v1";

/// Where compiled artifacts live, and the key that authenticates them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileCache {
    access: CacheAccess,
}

/// How a component was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheStatus {
    /// Loaded from a cache file whose tag verified.
    Hit,
    /// Compiled, and stored for next time.
    Compiled,
    /// Compiled; a cache file existed but did not verify and was replaced.
    Rebuilt,
    /// Compiled without a cache (none configured, or it was refused).
    Uncached,
    /// Compiled when assay was built: loaded from the artifact embedded in
    /// the binary (`precompiled.rs`).
    Embedded,
}

impl CompileCache {
    /// A cache in `dir` (created on first use), authenticated with the
    /// per-user key: `$XDG_CONFIG_HOME/assay/secret.key`, else
    /// `~/.config/assay/secret.key`.
    pub fn new(dir: impl Into<PathBuf>) -> CompileCache {
        CompileCache { access: CacheAccess::new(dir.into(), default_key_file()) }
    }

    /// A cache in `dir` authenticated with the key in `key_file` (made there
    /// on first use). Keep it outside `dir` and outside any project.
    pub fn with_key_file(dir: impl Into<PathBuf>, key_file: impl Into<PathBuf>) -> CompileCache {
        CompileCache { access: CacheAccess::new(dir.into(), Some(key_file.into())) }
    }

    /// The per-user default: `$XDG_CACHE_HOME/assay/components`, else
    /// `~/.cache/assay/components` (a relative `XDG_CACHE_HOME` is ignored).
    pub fn default_dir() -> Option<PathBuf> {
        Some(crate::private_files::user_cache_dir()?.join("components"))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        self.access.dir()
    }

    /// The component for `bytes`: from the cache when an authentic artifact
    /// is there, else compiled (and stored; a failure to store only costs
    /// the next run a compile). A cache that is refused compiles in memory
    /// ([`CacheStatus::Uncached`]).
    pub fn load_or_compile(&self, engine: &Engine, bytes: &[u8]) -> wasmtime::Result<(Component, CacheStatus)> {
        self.load_or_compile_announced(engine, bytes, &Sha256::digest(bytes).into(), &|| {})
    }

    /// [`CompileCache::load_or_compile`] of the component whose sha256 is
    /// `component_sha`, calling `announce` before it compiles.
    fn load_or_compile_announced(
        &self,
        engine: &Engine,
        bytes: &[u8],
        component_sha: &[u8; 32],
        announce: &dyn Fn(),
    ) -> wasmtime::Result<(Component, CacheStatus)> {
        let Some(key) = self.access.key() else {
            announce();
            return Ok((Component::new(engine, bytes)?, CacheStatus::Uncached));
        };
        let component_sha = *component_sha;
        let compatibility = compatibility_hash(engine).to_le_bytes();
        let name: [u8; 32] = Sha256::new().chain_update(component_sha).chain_update(compatibility).finalize().into();
        let file = self.dir().join(format!("{}.cwasm", hex(&name)));
        let mut status = CacheStatus::Compiled;
        match private_files::read(&file) {
            Ok(stored) => {
                if let Some((tag, artifact)) = stored.split_at_checked(MAC_LEN)
                    && key.verify(DOMAIN, &[artifact, &component_sha, &compatibility], tag)
                {
                    // SAFETY: these bytes are an artifact that this user's
                    // assay serialized from these component bytes with an
                    // engine of this compatibility hash: the tag, under a key
                    // only this user can read, says so. wasmtime checks
                    // compatibility again on load.
                    if let Ok(component) = unsafe { Component::deserialize(engine, artifact) } {
                        return Ok((component, CacheStatus::Hit));
                    }
                }
                status = CacheStatus::Rebuilt;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // Something unreadable (a symbolic link, a directory) is there.
            Err(_) => status = CacheStatus::Rebuilt,
        }
        announce();
        let compiled = engine.precompile_component(bytes)?;
        // SAFETY: just produced by this engine from these bytes.
        let component = unsafe { Component::deserialize(engine, &compiled)? };
        let tag = key.mac(DOMAIN, &[&compiled, &component_sha, &compatibility]);
        let _ = private_files::write(&file, &[&tag[..], &compiled].concat());
        Ok((component, status))
    }
}

/// Compiles `bytes` (whose sha256 is `component_sha`) with `cache` if there
/// is one, calling `announce` before compiling (not when the cache has it).
pub(crate) fn compile(
    engine: &Engine,
    cache: Option<&CompileCache>,
    bytes: &[u8],
    component_sha: &[u8; 32],
    announce: &dyn Fn(),
) -> wasmtime::Result<(Component, CacheStatus)> {
    match cache {
        Some(cache) => cache.load_or_compile_announced(engine, bytes, component_sha, announce),
        None => {
            announce();
            Ok((Component::new(engine, bytes)?, CacheStatus::Uncached))
        }
    }
}

/// The engine's compatibility hash as a number: equal for engines whose
/// artifacts are interchangeable.
fn compatibility_hash(engine: &Engine) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.finish()
}
