//! The answer cache: a backend's answers on disk, one file per (backend
//! URL, model, input), named by the sha256 of the three. A re-run of the
//! same checks reads every answer from here, so it costs no requests and
//! gives the same verdicts. Writes go to a temporary file renamed into
//! place, so a reader never sees half an answer; a cache that cannot be
//! written is skipped, never an error.

use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// A directory of cached answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerCache {
    dir: PathBuf,
}

impl AnswerCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> AnswerCache {
        AnswerCache { dir: dir.into() }
    }

    /// The file of the answer to `parts` (backend URL, model, input).
    fn file(&self, parts: &[&str]) -> PathBuf {
        let mut digest = Sha256::new();
        for part in parts {
            // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
            digest.update((part.len() as u64).to_le_bytes());
            digest.update(part.as_bytes());
        }
        let key: String = digest.finalize().iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{key}.txt"))
    }

    /// The cached answer to `parts`, if there is one.
    pub fn get(&self, parts: &[&str]) -> Option<String> {
        std::fs::read_to_string(self.file(parts)).ok()
    }

    /// Stores `answer` for `parts`; failures are ignored (the next run asks
    /// again).
    pub fn put(&self, parts: &[&str], answer: &str) {
        let file = self.file(parts);
        let temp = file.with_extension(format!("tmp{}-{:?}", std::process::id(), std::thread::current().id()));
        let stored = std::fs::create_dir_all(&self.dir)
            .and_then(|()| std::fs::write(&temp, answer))
            .and_then(|()| std::fs::rename(&temp, &file));
        if stored.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_keyed_by_every_part() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::new(dir.path().join("judge"));
        assert_eq!(cache.get(&["u", "m", "p"]), None);
        cache.put(&["u", "m", "p"], "pass");
        assert_eq!(cache.get(&["u", "m", "p"]).as_deref(), Some("pass"));
        assert_eq!(cache.get(&["u", "m2", "p"]), None);
        assert_eq!(cache.get(&["um", "", "p"]), None);
    }

    #[test]
    fn an_unwritable_cache_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "not a directory").unwrap();
        let cache = AnswerCache::new(blocker.join("judge"));
        cache.put(&["u"], "x");
        assert_eq!(cache.get(&["u"]), None);
    }
}
