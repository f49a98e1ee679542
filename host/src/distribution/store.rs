//! The plugin store: community components on this machine, content
//! addressed (`sha256/<hex>.wasm` under the user's cache folder), so that a
//! run reads a pinned component without the network and two projects
//! pinning one component share it. A file is stored only once its sha256 is
//! the name it is stored under, and loading it checks its pin again.
//! Cosign verifications are remembered beside it (`verified/…`), one empty
//! file per component, key and manifest digest.

use crate::errors::FetchError;
use crate::private_files;
use crate::sandbox::sha256_hex;
use std::path::{Path, PathBuf};

/// The plugin store.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// `$XDG_CACHE_HOME/assay/plugins`, else `~/.cache/assay/plugins`.
    pub fn default_dir() -> Option<PathBuf> {
        Some(private_files::user_cache_dir()?.join("plugins"))
    }

    /// The store in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The component whose sha256 is `sha256`, when it is stored.
    pub fn get(&self, sha256: &str) -> Option<PathBuf> {
        let path = self.path(sha256);
        path.is_file().then_some(path)
    }

    /// Stores `bytes` under their sha256 and says where.
    pub fn put(&self, bytes: &[u8]) -> Result<PathBuf, FetchError> {
        let path = self.path(&sha256_hex(bytes));
        self.private_dir(path.parent().expect("a stored file's folder"))?;
        private_files::write(&path, bytes)
            .map_err(|e| self.error(format!("cannot write `{}`: {e}", path.display())))?;
        Ok(path)
    }

    /// Whether the component `sha256`, published as `manifest_digest`, was
    /// verified with the key whose sha256 is `key`.
    pub fn is_verified(&self, sha256: &str, key: &str, manifest_digest: &str) -> bool {
        self.verified_path(sha256, key, manifest_digest).is_file()
    }

    /// Remembers that the component `sha256`, published as
    /// `manifest_digest`, was verified with the key whose sha256 is `key`.
    pub fn mark_verified(&self, sha256: &str, key: &str, manifest_digest: &str) -> Result<(), FetchError> {
        let path = self.verified_path(sha256, key, manifest_digest);
        self.private_dir(path.parent().expect("a marker's folder"))?;
        private_files::write(&path, b"").map_err(|e| self.error(format!("cannot write `{}`: {e}", path.display())))
    }

    fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join("sha256").join(format!("{sha256}.wasm"))
    }

    fn verified_path(&self, sha256: &str, key: &str, manifest_digest: &str) -> PathBuf {
        let manifest = manifest_digest.trim_start_matches("sha256:");
        self.dir.join("verified").join(format!("{sha256}.{key}.{manifest}"))
    }

    /// Makes `dir` (0700) and checks that only the user can change it: a
    /// store others can write to could hand a run anything.
    fn private_dir(&self, dir: &Path) -> Result<(), FetchError> {
        private_files::create_dir(dir).map_err(|e| self.error(format!("cannot create `{}`: {e}", dir.display())))?;
        private_files::check_dir(&self.dir).map_err(|message| self.error(message))?;
        private_files::check_dir(dir).map_err(|message| self.error(message))
    }

    fn error(&self, message: String) -> FetchError {
        FetchError::Store { dir: self.dir.clone(), message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_stored_under_their_sha256_and_verifications_beside_them() {
        let temp = tempfile::tempdir().unwrap();
        let store = Store::new(temp.path().join("plugins"));
        let sha256 = sha256_hex(b"component");
        assert_eq!(store.get(&sha256), None);
        let path = store.put(b"component").unwrap();
        assert_eq!(store.get(&sha256), Some(path.clone()));
        assert_eq!(std::fs::read(&path).unwrap(), b"component");
        assert!(!store.is_verified(&sha256, "key", "sha256:m"));
        store.mark_verified(&sha256, "key", "sha256:m").unwrap();
        assert!(store.is_verified(&sha256, "key", "sha256:m"));
        assert!(!store.is_verified(&sha256, "other-key", "sha256:m"));
    }

    #[cfg(unix)]
    #[test]
    fn a_store_others_can_write_to_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("plugins");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = Store::new(&dir).put(b"component").unwrap_err().to_string();
        assert!(error.contains("writable by group or others"), "{error}");
    }
}
