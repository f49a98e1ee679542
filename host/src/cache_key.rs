//! The per-user secret that authenticates cache files, and the checks a
//! cache passes before it is used.
//!
//! Every file of the compile cache and of the answer cache carries an
//! HMAC-SHA256 under a key of 32 random bytes kept in
//! `$XDG_CONFIG_HOME/assay/secret.key`, else `~/.config/assay/secret.key`:
//! outside every cache directory (which a flag or a configuration may
//! choose) and outside every project. Whoever can write a cache directory but
//! cannot read that key cannot make a file the cache accepts.
//!
//! The key is made on first use (a 0700 directory, a 0600 file that appears
//! whole, never replacing one that is there). A key file that is a symbolic
//! link, is not a regular file, is owned by someone else, has any group or
//! other permission bit, or is not 32 bytes long is refused, as is a cache
//! directory owned by someone else or writable by group or others: a refusal
//! is warned about on stderr once per process (naming the file and the fix)
//! and turns that cache off. It never fails a run.

use crate::private_files;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashSet;
use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

#[cfg(unix)]
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

/// How many bytes the key has.
const KEY_LEN: usize = 32;

/// The length of a MAC (HMAC-SHA256).
pub(crate) const MAC_LEN: usize = 32;

/// The default place of the key: `$XDG_CONFIG_HOME/assay/secret.key`, else
/// `$HOME/.config/assay/secret.key`. A relative `XDG_CONFIG_HOME` is
/// ignored, as the XDG specification says (it would put the key in whatever
/// directory assay runs in).
pub(crate) fn default_key_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("assay").join("secret.key"))
}

/// The secret key.
pub(crate) struct SecretKey([u8; KEY_LEN]);

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

/// Why a key file was not used.
enum KeyFile {
    Missing,
    Refused { reason: String, fix: &'static str },
}

impl SecretKey {
    /// The key in `path`, made there first if there is none; why not, as a
    /// warning ready to print.
    fn load_or_create(path: &Path) -> Result<SecretKey, String> {
        let refused = |reason: String, fix: &str| {
            format!(
                "warning: not using the caches: the cache key `{}` {reason}\n\nConsider {fix} (assay makes a new key \
                 on the next run; cached entries are then compiled or asked afresh)",
                path.display()
            )
        };
        match SecretKey::read(path) {
            Ok(key) => return Ok(key),
            Err(KeyFile::Refused { reason, fix }) => return Err(refused(reason, fix)),
            Err(KeyFile::Missing) => {}
        }
        let cannot_make = |e: io::Error| {
            format!("warning: not using the caches: failed to make the cache key `{}`: {e}", path.display())
        };
        if let Some(parent) = path.parent() {
            private_files::create_dir(parent).map_err(cannot_make)?;
        }
        let mut key = [0u8; KEY_LEN];
        getrandom::fill(&mut key).map_err(|e| cannot_make(io::Error::other(e.to_string())))?;
        match private_files::write_new(path, &key) {
            Ok(()) => Ok(SecretKey(key)),
            // Another process made it first: use that one.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => SecretKey::read(path).map_err(|e| match e {
                KeyFile::Refused { reason, fix } => refused(reason, fix),
                KeyFile::Missing => cannot_make(io::Error::other("it vanished as it was made")),
            }),
            Err(e) => Err(cannot_make(e)),
        }
    }

    /// Reads and checks the key file without following a symbolic link or
    /// blocking on a FIFO; the checks look at the file that was opened.
    fn read(path: &Path) -> Result<SecretKey, KeyFile> {
        const DELETE: &str = "deleting it";
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        let file = match options.open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(KeyFile::Missing),
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(KeyFile::Refused { reason: "is a symbolic link".into(), fix: "deleting the link" });
            }
            Err(e) => return Err(KeyFile::Refused { reason: format!("cannot be read: {e}"), fix: DELETE }),
        };
        let metadata =
            file.metadata().map_err(|e| KeyFile::Refused { reason: format!("cannot be read: {e}"), fix: DELETE })?;
        if !metadata.is_file() {
            return Err(KeyFile::Refused { reason: "is not a regular file".into(), fix: DELETE });
        }
        #[cfg(unix)]
        {
            let user = private_files::current_uid();
            if metadata.uid() != user {
                let reason = format!("is owned by uid {}, not by you (uid {user})", metadata.uid());
                return Err(KeyFile::Refused { reason, fix: DELETE });
            }
            let mode = metadata.mode() & 0o7777;
            if mode & 0o077 != 0 {
                return Err(KeyFile::Refused {
                    reason: format!("has permissions for group or others (mode {mode:o}), so others may know it"),
                    fix: "deleting it, or `chmod 600` on it if no one else can have read it",
                });
            }
        }
        let mut bytes = Vec::with_capacity(KEY_LEN + 1);
        file.take(KEY_LEN as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| KeyFile::Refused { reason: format!("cannot be read: {e}"), fix: DELETE })?;
        let key = <[u8; KEY_LEN]>::try_from(bytes.as_slice()).map_err(|_| KeyFile::Refused {
            reason: format!(
                "is {} bytes long, not {KEY_LEN}",
                if bytes.len() > KEY_LEN { "more than 32".to_owned() } else { bytes.len().to_string() }
            ),
            fix: DELETE,
        })?;
        Ok(SecretKey(key))
    }

    /// The MAC of `parts` for the purpose `domain`. Each part is
    /// length-prefixed, so no two lists of parts give the same message.
    pub(crate) fn mac(&self, domain: &str, parts: &[&[u8]]) -> [u8; MAC_LEN] {
        self.hmac(domain, parts).finalize().into_bytes().into()
    }

    /// Whether `tag` is the MAC of `parts` for `domain` (compared in constant
    /// time).
    pub(crate) fn verify(&self, domain: &str, parts: &[&[u8]], tag: &[u8]) -> bool {
        self.hmac(domain, parts).verify_slice(tag).is_ok()
    }

    fn hmac(&self, domain: &str, parts: &[&[u8]]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        for part in std::iter::once(domain.as_bytes()).chain(parts.iter().copied()) {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac
    }
}

/// A cache's directory and key, checked on first use: the key loaded (or
/// made) and the directory made or checked. Clones share the outcome.
#[derive(Clone)]
pub(crate) struct CacheAccess {
    dir: PathBuf,
    key_file: Option<PathBuf>,
    checked: Arc<OnceLock<Option<SecretKey>>>,
}

impl CacheAccess {
    /// Access to `dir` with the key in `key_file` (`None`: no place for a
    /// key was found, so the cache stays off).
    pub(crate) fn new(dir: PathBuf, key_file: Option<PathBuf>) -> CacheAccess {
        CacheAccess { dir, key_file, checked: Arc::default() }
    }

    /// The directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key, when the key and the directory pass their checks; the first
    /// call warns once about whichever does not.
    pub(crate) fn key(&self) -> Option<&SecretKey> {
        self.checked
            .get_or_init(|| {
                let outcome = self.check();
                if let Err(warning) = &outcome {
                    warn_once(warning);
                }
                outcome.ok()
            })
            .as_ref()
    }

    fn check(&self) -> Result<SecretKey, String> {
        let Some(key_file) = &self.key_file else {
            return Err("warning: not using the caches: there is no place for the cache key (neither \
                        XDG_CONFIG_HOME nor HOME is set)\n\nConsider setting HOME, or --no-cache"
                .into());
        };
        let key = SecretKey::load_or_create(key_file)?;
        private_files::create_dir(&self.dir).map_err(|e| {
            format!("warning: not using the cache in `{}`: failed to create it: {e}", self.dir.display())
        })?;
        private_files::check_dir(&self.dir).map_err(|reason| {
            format!(
                "warning: not using the cache in `{}`: {reason}, so others could plant files in it\n\nConsider `chmod \
                 700` on it if it is yours, or another directory (--cache-dir DIR)",
                self.dir.display()
            )
        })?;
        Ok(key)
    }
}

impl fmt::Debug for CacheAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheAccess").field("dir", &self.dir).field("key_file", &self.key_file).finish_non_exhaustive()
    }
}

impl PartialEq for CacheAccess {
    fn eq(&self, other: &Self) -> bool {
        self.dir == other.dir && self.key_file == other.key_file
    }
}

impl Eq for CacheAccess {}

/// Prints `message` on stderr unless this process printed it already (the
/// compile cache and each answer cache check the same key).
pub(crate) fn warn_once(message: &str) {
    static PRINTED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut printed = PRINTED.lock().unwrap_or_else(|e| e.into_inner());
    if printed.get_or_insert_with(HashSet::new).insert(message.to_owned()) {
        eprintln!("{message}");
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn refusal(path: &Path) -> String {
        SecretKey::load_or_create(path).unwrap_err()
    }

    #[test]
    fn the_key_is_made_private_on_first_use_and_read_back_after() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("config").join("assay").join("secret.key");
        let first = SecretKey::load_or_create(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o7777, 0o600);
        assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o7777, 0o700);
        assert_eq!(std::fs::read(&path).unwrap().len(), KEY_LEN);
        let again = SecretKey::load_or_create(&path).unwrap();
        assert_eq!(first.0, again.0);
        assert_ne!(first.0, [0; KEY_LEN]);
    }

    #[test]
    fn macs_depend_on_the_key_the_domain_and_every_part() {
        let (a, b) = (SecretKey([1; KEY_LEN]), SecretKey([2; KEY_LEN]));
        let tag = a.mac("d", &[b"ab", b"c"]);
        assert!(a.verify("d", &[b"ab", b"c"], &tag));
        assert!(!b.verify("d", &[b"ab", b"c"], &tag));
        assert!(!a.verify("e", &[b"ab", b"c"], &tag));
        assert!(!a.verify("d", &[b"a", b"bc"], &tag));
        assert!(!a.verify("d", &[b"ab", b"c"], &tag[..31]));
    }

    #[test]
    fn a_key_open_to_others_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.key");
        std::fs::write(&path, [7u8; KEY_LEN]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let warning = refusal(&path);
        assert!(warning.contains("has permissions for group or others (mode 640)"), "{warning}");
        assert!(warning.contains("`chmod 600`"), "{warning}");
        assert!(warning.contains(&path.display().to_string()), "{warning}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(SecretKey::load_or_create(&path).unwrap().0, [7u8; KEY_LEN]);
    }

    #[test]
    fn a_key_of_the_wrong_length_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        for (length, said) in [(0, "is 0 bytes long"), (31, "is 31 bytes long"), (33, "is more than 32 bytes long")] {
            let path = dir.path().join(format!("key{length}"));
            private_files::write(&path, &vec![1; length]).unwrap();
            let warning = refusal(&path);
            assert!(warning.contains(said), "{warning}");
            assert!(warning.contains("Consider deleting it"), "{warning}");
            assert_eq!(std::fs::read(&path).unwrap().len(), length, "a refused key is not replaced");
        }
    }

    #[test]
    fn a_symlinked_key_or_a_fifo_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.key");
        private_files::write(&real, &[3; KEY_LEN]).unwrap();
        let link = dir.path().join("link.key");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(refusal(&link).contains("is a symbolic link"));

        // A FIFO would block a plain open until someone writes to it.
        let fifo = dir.path().join("fifo.key");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(refusal(&fifo).contains("is not a regular file"));
    }

    /// Needs root (the tests run as root in this project's CI and dev
    /// machines): chown is how a file comes to belong to someone else.
    #[test]
    fn a_key_owned_by_someone_else_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.key");
        private_files::write(&path, &[5; KEY_LEN]).unwrap();
        std::os::unix::fs::chown(&path, Some(4242), None)
            .expect("this test needs root, to give the key file to another uid");
        assert!(refusal(&path).contains("is owned by uid 4242, not by you"));
    }

    #[test]
    fn a_cache_without_a_usable_key_or_directory_is_off() {
        let dir = tempfile::tempdir().unwrap();
        assert!(CacheAccess::new(dir.path().join("cache"), None).key().is_none());

        let key_file = dir.path().join("secret.key");
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(CacheAccess::new(open, Some(key_file.clone())).key().is_none());

        let good = CacheAccess::new(dir.path().join("a").join("cache"), Some(key_file));
        assert!(good.key().is_some());
        assert_eq!(std::fs::metadata(good.dir()).unwrap().mode() & 0o7777, 0o700);
    }
}
