//! Where runs keep their results: `results/<timestamp>` under the project
//! root (under the current folder when there is no project), and
//! `results/latest`, a symbolic link to the last run's folder, so that
//! `--rerun-failed`, `assay report` and `assay diff` need no timestamp
//! typed by hand.

use std::io;
use std::path::{Path, PathBuf};

/// The name of the link to the last run.
pub const LATEST: &str = "latest";

/// The folder that holds the runs' results folders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFolders {
    base: PathBuf,
}

impl RunFolders {
    /// The runs kept in `base` (a project's `results/`).
    pub fn new(base: impl Into<PathBuf>) -> RunFolders {
        RunFolders { base: base.into() }
    }

    /// The runs of the project `config` is of: `results/` beside its
    /// `assay.toml`, or in the current folder when there is none.
    pub fn of_project(config: &crate::config::Config) -> RunFolders {
        match config.file.is_some() && config.dir != Path::new(".") {
            true => RunFolders::new(config.dir.join("results")),
            false => RunFolders::new("results"),
        }
    }

    /// The folder.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// A new run's folder, `<base>/<UTC time>` (`-2`, `-3`… when a run of
    /// the same second has it).
    pub fn next(&self) -> PathBuf {
        let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%SZ").to_string();
        let mut dir = self.base.join(&stamp);
        let mut n = 1;
        while dir.exists() {
            n += 1;
            dir = self.base.join(format!("{stamp}-{n}"));
        }
        dir
    }

    /// `<base>/latest`.
    pub fn latest(&self) -> PathBuf {
        self.base.join(LATEST)
    }

    /// Points `<base>/latest` at `dir` (a folder in `base`), replacing
    /// the link atomically; a `latest` that is not a link is left alone
    /// and is an error.
    pub fn mark_latest(&self, dir: &Path) -> io::Result<()> {
        let name = dir.file_name().ok_or_else(|| io::Error::other("a run's folder has a name"))?;
        let latest = self.latest();
        if std::fs::symlink_metadata(&latest).is_ok_and(|m| !m.file_type().is_symlink()) {
            return Err(io::Error::other(format!(
                "`{}` is not a link to a run's folder: move it away, and `latest` will point at the last run",
                latest.display()
            )));
        }
        let temp = self.base.join(format!(".{LATEST}.{}", std::process::id()));
        let _ = std::fs::remove_file(&temp);
        link(Path::new(name), &temp)?;
        std::fs::rename(&temp, &latest).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }

    /// The last run's folder (where `latest` leads), when there is one.
    pub fn last(&self) -> Option<PathBuf> {
        std::fs::canonicalize(self.latest()).ok()
    }

    /// The run before `run` (a folder in `base`, however named), when
    /// there is one.
    pub fn before(&self, run: &Path) -> Option<PathBuf> {
        let run = std::fs::canonicalize(run).ok()?;
        let runs = self.runs();
        let at = runs.iter().position(|other| std::fs::canonicalize(other).ok().as_ref() == Some(&run))?;
        at.checked_sub(1).map(|before| runs[before].clone())
    }

    /// The runs' folders in `base` (each holding a `results.jsonl`), oldest
    /// first by name (their names are their start times).
    pub fn runs(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.base) else { return Vec::new() };
        let mut runs: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_name() != LATEST && !entry.file_name().to_string_lossy().starts_with('.'))
            .map(|entry| entry.path())
            .filter(|path| path.join(crate::job::RESULTS_FILE).is_file())
            .collect();
        runs.sort();
        runs
    }
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(not(unix))]
fn link(_target: &Path, _at: &Path) -> io::Result<()> {
    Err(io::Error::other("`results/latest` is a symbolic link, which assay makes on Unix only"))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn latest_follows_the_last_run_and_runs_are_in_time_order() {
        let temp = tempfile::tempdir().unwrap();
        let folders = RunFolders::new(temp.path().join("results"));
        let first = folders.next();
        std::fs::create_dir_all(&first).unwrap();
        std::fs::write(first.join(crate::job::RESULTS_FILE), "").unwrap();
        folders.mark_latest(&first).unwrap();
        assert_eq!(std::fs::read_link(folders.latest()).unwrap(), first.file_name().unwrap());
        let second = folders.next();
        assert_ne!(first, second);
        std::fs::create_dir_all(&second).unwrap();
        std::fs::write(second.join(crate::job::RESULTS_FILE), "").unwrap();
        folders.mark_latest(&second).unwrap();
        assert_eq!(std::fs::canonicalize(folders.latest()).unwrap(), std::fs::canonicalize(&second).unwrap());
        assert_eq!(folders.runs(), [first.clone(), second.clone()]);
        assert_eq!(folders.before(&folders.latest()), Some(first.clone()));
        assert_eq!(folders.before(&first), None);
        assert_eq!(folders.last(), Some(std::fs::canonicalize(&second).unwrap()));

        std::fs::remove_file(folders.latest()).unwrap();
        std::fs::create_dir(folders.latest()).unwrap();
        let error = folders.mark_latest(&folders.runs()[0]).unwrap_err().to_string();
        assert!(error.contains("is not a link to a run's folder"), "{error}");
    }
}
