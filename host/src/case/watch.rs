//! Watching a project for `assay run --watch`: which case files changed,
//! or that everything must run again (the configuration, a plugin, or a
//! file cases read — a suite's specs, a promptfoo config or its prompts).
//! Changes come from the operating system's file events (the `notify`
//! crate: inotify on Linux), collected for a moment after the first so that
//! an editor's save is one change.

use crate::case::has_extension;
use crate::errors::WatchError;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// What changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Changed {
    /// Only these case files (HOCON cases and suite files), each once.
    Cases(Vec<PathBuf>),
    /// The configuration, a plugin, or a file cases read: run everything.
    Everything(PathBuf),
}

/// The extensions of files a change to which reruns everything: plugins,
/// and what suites and promptfoo configs read (specs, configs, prompts,
/// tests, scripts).
const EVERYTHING_EXTENSIONS: &[&str] =
    &["toml", "wasm", "yaml", "yml", "json", "jsonl", "js", "mjs", "cjs", "ts", "py", "txt", "md", "csv", "j2"];

/// The extensions of case files, rerun alone when they change.
const CASE_EXTENSIONS: &[&str] = &["hocon", "suite.toml"];

/// How long changes are collected after the first.
const SETTLE: Duration = Duration::from_millis(200);

/// A watch on folders and files.
pub struct CaseWatch {
    // Kept alive: dropping it ends the events.
    _watcher: notify::RecommendedWatcher,
    events: mpsc::Receiver<notify::Result<notify::Event>>,
    ignored: Vec<PathBuf>,
}

impl CaseWatch {
    /// Watches each of `paths` (a folder with everything beneath it, a
    /// file through its folder), leaving out what is under any of
    /// `ignored` (the results folder, reports the run writes).
    pub fn new(paths: &[PathBuf], ignored: &[PathBuf]) -> Result<CaseWatch, WatchError> {
        let (sender, events) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(sender)
            .map_err(|e| WatchError { path: paths.first().cloned().unwrap_or_default(), cause: e.to_string() })?;
        use notify::Watcher as _;
        for path in paths {
            let (target, mode) = match path.is_dir() {
                true => (absolute(path), notify::RecursiveMode::Recursive),
                false => (absolute(&parent_of(path)), notify::RecursiveMode::NonRecursive),
            };
            watcher.watch(&target, mode).map_err(|e| WatchError { path: target.clone(), cause: e.to_string() })?;
        }
        let ignored = ignored.iter().map(|path| absolute(path)).collect();
        Ok(CaseWatch { _watcher: watcher, events, ignored })
    }

    /// Blocks until something worth a run changes, then collects what
    /// else changes for a moment; `None` when the watch has ended.
    pub fn next(&self) -> Option<Changed> {
        let mut cases: Vec<PathBuf> = Vec::new();
        let mut everything = None;
        let mut settling = false;
        loop {
            let event = match settling {
                false => self.events.recv().ok()?,
                true => match self.events.recv_timeout(SETTLE) {
                    Ok(event) => event,
                    Err(mpsc::RecvTimeoutError::Timeout) => break,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                },
            };
            let Ok(event) = event else { continue };
            if !matches!(
                event.kind,
                notify::EventKind::Create(_) | notify::EventKind::Modify(_) | notify::EventKind::Remove(_)
            ) {
                continue;
            }
            for path in event.paths {
                if self.ignored.iter().any(|ignored| path.starts_with(ignored)) || is_scratch(&path) {
                    continue;
                }
                if CASE_EXTENSIONS.iter().any(|x| has_extension(&path, x)) {
                    if !cases.contains(&path) {
                        cases.push(path);
                    }
                    settling = true;
                } else if EVERYTHING_EXTENSIONS.iter().any(|x| has_extension(&path, x)) {
                    everything.get_or_insert(path);
                    settling = true;
                }
            }
        }
        // A case file that was removed is not run again; others are.
        cases.retain(|path| path.is_file());
        match everything {
            Some(path) => Some(Changed::Everything(path)),
            None if cases.is_empty() => self.next(),
            None => Some(Changed::Cases(cases)),
        }
    }
}

/// An editor's scratch file: hidden, or a backup (`~`).
fn is_scratch(path: &Path) -> bool {
    path.file_name().is_some_and(|name| {
        let name = name.to_string_lossy();
        name.starts_with('.') || name.ends_with('~')
    })
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_file_changing_reruns_it_and_the_configuration_everything() {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        std::fs::create_dir_all(root.join("cases")).unwrap();
        std::fs::create_dir_all(root.join("results")).unwrap();
        let watch = CaseWatch::new(std::slice::from_ref(&root), &[root.join("results")]).unwrap();
        std::fs::write(root.join("results/results.jsonl"), "{}").unwrap();
        std::fs::write(root.join("cases/.a.hocon.swp"), "x").unwrap();
        std::fs::write(root.join("cases/a.hocon"), "{}").unwrap();
        assert_eq!(watch.next(), Some(Changed::Cases(vec![root.join("cases/a.hocon")])));
        std::fs::write(root.join("cases/a.hocon"), "{ }").unwrap();
        std::fs::write(root.join("assay.toml"), "").unwrap();
        assert_eq!(watch.next(), Some(Changed::Everything(root.join("assay.toml"))));
    }
}
