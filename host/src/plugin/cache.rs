//! The compile cache: components compiled once per machine, not per run.
//!
//! An artifact is stored as `<key>.cwasm`, where the key is the sha256 of
//! the component's bytes and of the engine's compatibility hash (so another
//! wasmtime version or configuration never sees it), next to
//! `<key>.sha256`, the digest of the artifact as this engine wrote it. A
//! load reads the artifact, checks the digest, and only then deserializes
//! from the bytes it checked (not from the file again, which another
//! process could swap in between). Anything that does not verify — a torn
//! write, a corrupt or foreign file — is ignored and rebuilt. Writes go to a
//! temporary file renamed into place, so readers never see half a file.
//!
//! The cache directory is trusted as the user's own (like `~/.cargo`): the
//! digest guards against corruption and accidents, not against someone who
//! can write to the user's files.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where compiled artifacts live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileCache {
    dir: PathBuf,
}

/// How a component was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheStatus {
    /// Loaded from a verified cache file.
    Hit,
    /// Compiled, and stored for next time.
    Compiled,
    /// Compiled; a cache file existed but did not verify and was replaced.
    Rebuilt,
    /// Compiled without a cache.
    Uncached,
}

impl CompileCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> CompileCache {
        CompileCache { dir: dir.into() }
    }

    /// The per-user default: `$XDG_CACHE_HOME/assay/components`, else
    /// `~/.cache/assay/components`.
    pub fn default_dir() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
        Some(base.join("assay").join("components"))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The component for `bytes`: from the cache when a verified artifact is
    /// there, else compiled (and stored; a failure to store only costs the
    /// next run a compile).
    pub fn load_or_compile(&self, engine: &Engine, bytes: &[u8]) -> wasmtime::Result<(Component, CacheStatus)> {
        let key = key(engine, bytes);
        let artifact = self.dir.join(format!("{key}.cwasm"));
        let digest_file = self.dir.join(format!("{key}.sha256"));
        let mut status = CacheStatus::Compiled;
        if let (Ok(stored), Ok(digest)) = (std::fs::read(&artifact), std::fs::read_to_string(&digest_file)) {
            if hex(&Sha256::digest(&stored)) == digest.trim() {
                // SAFETY: these bytes are an artifact this engine
                // configuration serialized (the key includes its
                // compatibility hash), verified against the digest written
                // with it; wasmtime checks compatibility again on load.
                if let Ok(component) = unsafe { Component::deserialize(engine, &stored) } {
                    return Ok((component, CacheStatus::Hit));
                }
            }
            status = CacheStatus::Rebuilt;
        } else if artifact.exists() {
            status = CacheStatus::Rebuilt;
        }
        let compiled = engine.precompile_component(bytes)?;
        // SAFETY: just produced by this engine from these bytes.
        let component = unsafe { Component::deserialize(engine, &compiled)? };
        let _ = self.store(&artifact, &digest_file, &compiled);
        Ok((component, status))
    }

    fn store(&self, artifact: &Path, digest_file: &Path, compiled: &[u8]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        // The digest goes last: until it is in place the artifact is not
        // trusted.
        write_atomically(artifact, compiled)?;
        write_atomically(digest_file, hex(&Sha256::digest(compiled)).as_bytes())
    }
}

/// Compiles `bytes` with `cache` if there is one.
pub(crate) fn compile(
    engine: &Engine,
    cache: Option<&CompileCache>,
    bytes: &[u8],
) -> wasmtime::Result<(Component, CacheStatus)> {
    match cache {
        Some(cache) => cache.load_or_compile(engine, bytes),
        None => Ok((Component::new(engine, bytes)?, CacheStatus::Uncached)),
    }
}

fn key(engine: &Engine, bytes: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let mut digest = Sha256::new();
    digest.update(bytes);
    digest.update(hasher.finish().to_le_bytes());
    hex(&digest.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temp, bytes)?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}
