//! The answer cache: a backend's answers on disk, one file per (backend
//! URL, model, credential, input), named by the sha256 of them (the
//! credential as its own sha256, [`credential_part`]: an answer one API key
//! paid for is not served to a run with another). A re-run of the
//! same checks reads every answer from here, so it costs no requests and
//! gives the same verdicts.
//!
//! A file is the hex HMAC-SHA256 of the parts and the answer under the
//! per-user secret key (see `cache_key`), a newline, and the answer. An
//! entry whose tag does not verify — planted by someone without the key,
//! copied from another input, torn — is a miss: the backend is asked afresh
//! and the entry overwritten. The directory is made 0700 and files are
//! written 0600 through randomly named temporary files renamed into place
//! (see `private_files`), so a reader never sees half an answer. A cache
//! that cannot be written is skipped, never an error; one whose key or
//! directory is refused is off (warned once).

use crate::cache_key::{CacheAccess, MAC_LEN, default_key_file};
use crate::private_files::{self, hex};
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// The part of a cache key that stands for the API key a request sends:
/// its sha256 (never the key), or nothing without one.
pub fn credential_part(api_key: Option<&str>) -> String {
    api_key.map(|key| format!("key:{}", crate::sandbox::sha256_hex(key.as_bytes()))).unwrap_or_default()
}

/// What the answer cache's tags are for (the compile cache uses the same key).
const DOMAIN: &str = "assay answer cache v1";

/// A directory of cached answers, and the key that authenticates them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerCache {
    access: CacheAccess,
}

impl AnswerCache {
    /// A cache in `dir` (created on first use), authenticated with the
    /// per-user key: `$XDG_CONFIG_HOME/assay/secret.key`, else
    /// `~/.config/assay/secret.key`.
    pub fn new(dir: impl Into<PathBuf>) -> AnswerCache {
        AnswerCache { access: CacheAccess::new(dir.into(), default_key_file()) }
    }

    /// A cache in `dir` authenticated with the key in `key_file` (made there
    /// on first use). Keep it outside `dir` and outside any project.
    pub fn with_key_file(dir: impl Into<PathBuf>, key_file: impl Into<PathBuf>) -> AnswerCache {
        AnswerCache { access: CacheAccess::new(dir.into(), Some(key_file.into())) }
    }

    /// The file of the answer to `parts` (backend URL, model, input).
    fn file(&self, parts: &[&str]) -> PathBuf {
        let mut digest = Sha256::new();
        for part in parts {
            // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
            digest.update((part.len() as u64).to_le_bytes());
            digest.update(part.as_bytes());
        }
        self.access.dir().join(format!("{}.txt", hex(&digest.finalize())))
    }

    /// The cached answer to `parts`, if there is one and its tag verifies.
    pub fn get(&self, parts: &[&str]) -> Option<String> {
        let key = self.access.key()?;
        let stored = String::from_utf8(private_files::read(&self.file(parts)).ok()?).ok()?;
        let (tag, answer) = stored.split_once('\n')?;
        let tag = unhex(tag)?;
        key.verify(DOMAIN, &tagged(parts, answer), &tag).then(|| answer.to_owned())
    }

    /// Stores `answer` for `parts`; failures are ignored (the next run asks
    /// again).
    pub fn put(&self, parts: &[&str], answer: &str) {
        let Some(key) = self.access.key() else { return };
        let tag = key.mac(DOMAIN, &tagged(parts, answer));
        let _ = private_files::write(&self.file(parts), format!("{}\n{answer}", hex(&tag)).as_bytes());
    }
}

/// What a tag covers: every part, then the answer.
fn tagged<'a>(parts: &[&'a str], answer: &'a str) -> Vec<&'a [u8]> {
    parts.iter().chain([&answer]).map(|s| s.as_bytes()).collect()
}

/// The bytes of a MAC written in hex, if `text` is one.
fn unhex(text: &str) -> Option<[u8; MAC_LEN]> {
    let mut bytes = [0u8; MAC_LEN];
    if text.len() != 2 * MAC_LEN {
        return None;
    }
    for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_keys_by_its_digest_never_itself() {
        assert_eq!(credential_part(None), "");
        let part = credential_part(Some("sk-secret"));
        assert!(part.starts_with("key:") && !part.contains("sk-secret"), "{part}");
        assert_ne!(part, credential_part(Some("sk-other")));
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::with_key_file(dir.path().join("c"), dir.path().join("k"));
        cache.put(&["u", "m", &part, "p"], "pass");
        assert_eq!(cache.get(&["u", "m", &part, "p"]).as_deref(), Some("pass"));
        assert_eq!(cache.get(&["u", "m", &credential_part(Some("sk-other")), "p"]), None);
    }

    /// A cache in `dir/judge` with its key in `dir/secret.key`.
    fn cache_in(dir: &std::path::Path) -> AnswerCache {
        AnswerCache::with_key_file(dir.join("judge"), dir.join("secret.key"))
    }

    #[test]
    fn answers_are_keyed_by_every_part() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache_in(dir.path());
        assert_eq!(cache.get(&["u", "m", "p"]), None);
        cache.put(&["u", "m", "p"], "pass");
        assert_eq!(cache.get(&["u", "m", "p"]).as_deref(), Some("pass"));
        assert_eq!(cache.get(&["u", "m2", "p"]), None);
        assert_eq!(cache.get(&["um", "", "p"]), None);
        // Answers of several lines come back whole.
        cache.put(&["u", "m", "q"], "line one\nline two\n");
        assert_eq!(cache.get(&["u", "m", "q"]).as_deref(), Some("line one\nline two\n"));
    }

    #[test]
    fn an_unwritable_cache_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "not a directory").unwrap();
        let cache = AnswerCache::with_key_file(blocker.join("judge"), dir.path().join("secret.key"));
        cache.put(&["u"], "x");
        assert_eq!(cache.get(&["u"]), None);
    }

    #[test]
    fn an_entry_without_a_valid_tag_is_a_miss_and_is_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache_in(dir.path());
        let parts = ["u", "m", "is this right?"];
        cache.put(&parts, "fail");
        let file = cache.file(&parts);
        let genuine = std::fs::read_to_string(&file).unwrap();

        // The old format: the bare answer.
        std::fs::write(&file, "pass").unwrap();
        assert_eq!(cache.get(&parts), None);
        // A forged answer under the genuine tag.
        std::fs::write(&file, genuine.replace("\nfail", "\npass")).unwrap();
        assert_eq!(cache.get(&parts), None);
        // A genuine entry of another input copied here.
        cache.put(&["u", "m", "other"], "pass");
        std::fs::copy(cache.file(&["u", "m", "other"]), &file).unwrap();
        assert_eq!(cache.get(&parts), None);
        // The same answer under another user's key.
        let other = AnswerCache::with_key_file(dir.path().join("judge"), dir.path().join("other.key"));
        other.put(&parts, "pass");
        assert_eq!(cache.get(&parts), None);
        // Bad tags: not hex, the wrong length, no newline at all.
        for bad in ["zz\npass".to_owned(), format!("{}\npass", "ab".repeat(31)), "pass".repeat(40)] {
            std::fs::write(&file, bad).unwrap();
            assert_eq!(cache.get(&parts), None);
        }

        cache.put(&parts, "fail");
        assert_eq!(cache.get(&parts).as_deref(), Some("fail"));
    }

    #[cfg(unix)]
    #[test]
    fn the_directory_and_files_are_private() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let cache = cache_in(dir.path());
        cache.put(&["u", "m", "p"], "pass");
        assert_eq!(std::fs::metadata(dir.path().join("judge")).unwrap().mode() & 0o7777, 0o700);
        assert_eq!(std::fs::metadata(cache.file(&["u", "m", "p"])).unwrap().mode() & 0o7777, 0o600);
    }
}
