//! Finds test case files: a single file, a directory (recursively, every
//! `*.hocon`), or a glob pattern. Each file gets a stable case id.
//!
//! Symlinked directories are followed, but every directory is visited once
//! (known by device and inode), so links that loop (`up -> ..`) end the walk
//! instead of running it forever. Real directories are walked before the
//! links into them, and links in path order, so a case reachable both ways
//! keeps the id of its real path, and ids do not depend on the order the
//! file system lists entries in.

use crate::errors::DiscoverError;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// A test case file and the id its case will have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseFile {
    /// Where the file is.
    pub path: PathBuf,
    /// The case id: the path relative to the directory it was found in (or
    /// as given, for a file or glob), without the `.hocon` (or
    /// `.suite.toml`) extension, with `/` separators.
    pub id: String,
}

impl CaseFile {
    /// Whether it is a suite file (`*.suite.toml`), whose spec lines are
    /// the cases, rather than one test case.
    pub fn is_suite(&self) -> bool {
        has_extension(&self.path, SUITE_EXTENSION)
    }
}

/// Whether the file's name ends with `.EXTENSION` (which may have dots).
fn has_extension(path: &Path, extension: &str) -> bool {
    path.file_name().is_some_and(|name| {
        let name = name.to_string_lossy();
        name.len() > extension.len() + 1
            && name.ends_with(extension)
            && name[..name.len() - extension.len()].ends_with('.')
    })
}

/// The extension of neuro-san test case files.
const CASE_EXTENSIONS: &[&str] = &["hocon"];

/// The extensions of the files a run reads (`Project::discover`):
/// neuro-san test case files, and suite files (each naming spec files whose
/// every line is a case).
pub const RUN_EXTENSIONS: &[&str] = &["hocon", SUITE_EXTENSION];

/// The extension of suite files (`crate::suite`).
pub const SUITE_EXTENSION: &str = "suite.toml";

/// The extensions of scenario and validation files.
pub const SCENARIO_EXTENSIONS: &[&str] = &["yaml", "yml", "hocon", "json"];

/// Finds every test case file named by `inputs`, in a stable order (each
/// input's files sorted by path; inputs in the order given; duplicates
/// dropped). Directories are searched for `*.hocon` (see [`RUN_EXTENSIONS`]
/// for suite files too).
pub fn discover(inputs: &[PathBuf]) -> Result<Vec<CaseFile>, DiscoverError> {
    discover_with(inputs, CASE_EXTENSIONS)
}

/// [`discover`], searching directories for files with any of `extensions`.
pub fn discover_with(inputs: &[PathBuf], extensions: &[&str]) -> Result<Vec<CaseFile>, DiscoverError> {
    let mut files = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for input in inputs {
        for file in discover_one(input, extensions)? {
            if seen.insert(file.path.clone()) {
                files.push(file);
            }
        }
    }
    Ok(files)
}

fn discover_one(input: &Path, extensions: &[&str]) -> Result<Vec<CaseFile>, DiscoverError> {
    let text = input.to_string_lossy();
    if input.is_dir() {
        let wanted = |path: &Path| extensions.iter().any(|x| has_extension(path, x));
        let paths = walk(input, true, wanted)
            .map_err(|e| DiscoverError::Io { path: input.to_path_buf(), error: e.to_string() })?;
        return Ok(paths
            .into_iter()
            .map(|path| {
                let relative = path.strip_prefix(input).unwrap_or(&path).to_path_buf();
                CaseFile { id: id_of(&relative), path }
            })
            .collect());
    }
    if input.is_file() {
        return Ok(vec![CaseFile { id: id_of(input), path: input.to_path_buf() }]);
    }
    if text.contains(['*', '?', '[']) {
        let paths = glob_files(&text)?;
        if paths.is_empty() {
            return Err(DiscoverError::NoMatch { pattern: text.to_string() });
        }
        return Ok(paths.into_iter().map(|path| CaseFile { id: id_of(&path), path }).collect());
    }
    Err(DiscoverError::NotFound { path: input.to_path_buf() })
}

/// The files a glob pattern matches, sorted. A pattern with `**` is matched
/// against a cycle-safe walk of the folder before its first wildcard: the
/// `glob` crate follows symlinked directories in `**` with no cycle check.
fn glob_files(pattern: &str) -> Result<Vec<PathBuf>, DiscoverError> {
    let bad = |e: &dyn std::fmt::Display| DiscoverError::BadGlob { pattern: pattern.to_owned(), error: e.to_string() };
    if !pattern.contains("**") {
        let mut paths: Vec<PathBuf> =
            glob::glob(pattern).map_err(|e| bad(&e))?.filter_map(Result::ok).filter(|p| p.is_file()).collect();
        paths.sort();
        return Ok(paths);
    }
    let matcher = glob::Pattern::new(pattern).map_err(|e| bad(&e))?;
    let base: PathBuf = Path::new(pattern)
        .components()
        .take_while(|c| !matches!(c, Component::Normal(name) if name.to_string_lossy().contains(['*', '?', '['])))
        .collect();
    if !base.as_os_str().is_empty() && !base.is_dir() {
        return Ok(Vec::new());
    }
    // The same options `glob::glob` matches with.
    let options = glob::MatchOptions::new();
    walk(&base, false, |path| matcher.matches_path_with(path, options))
        .map_err(|e| DiscoverError::Io { path: base.clone(), error: e.to_string() })
}

/// How a directory is known when looking for cycles: its device and inode
/// (which also catches bind mounts), or its canonical path where there are
/// none.
#[cfg(unix)]
type DirId = (u64, u64);
#[cfg(not(unix))]
type DirId = PathBuf;

#[cfg(unix)]
fn dir_id(dir: &Path) -> std::io::Result<DirId> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })?;
    Ok((metadata.dev(), metadata.ino()))
}

#[cfg(not(unix))]
fn dir_id(dir: &Path) -> std::io::Result<DirId> {
    std::fs::canonicalize(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })
}

/// Every file under `root` that `wanted` keeps, sorted, skipping hidden
/// entries when `skip_hidden`. Each directory is read once, under the path
/// that claimed it first: real directories claim as they are found; the
/// links found in a round claim their targets after it, in path order (a
/// link to a directory already claimed is skipped), and are read in the
/// next round.
fn walk(root: &Path, skip_hidden: bool, wanted: impl Fn(&Path) -> bool) -> std::io::Result<Vec<PathBuf>> {
    let mut visited: HashSet<DirId> = HashSet::from([dir_id(root)?]);
    let mut files = Vec::new();
    let mut real = vec![root.to_path_buf()];
    loop {
        let mut links = Vec::new();
        while let Some(dir) = real.pop() {
            let listing = std::fs::read_dir(if dir.as_os_str().is_empty() { Path::new(".") } else { &dir })?;
            for entry in listing {
                let entry = entry?;
                if skip_hidden && entry.file_name().to_string_lossy().starts_with('.') {
                    continue;
                }
                // Joined by hand so that a walk of "" yields `a/b`, not `./a/b`.
                let path = dir.join(entry.file_name());
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    if visited.insert(dir_id(&path)?) {
                        real.push(path);
                    }
                } else if kind.is_symlink() && path.is_dir() {
                    links.push(path);
                } else if wanted(&path) {
                    files.push(path);
                }
            }
        }
        links.sort();
        for link in links {
            if visited.insert(dir_id(&link)?) {
                real.push(link);
            }
        }
        if real.is_empty() {
            break;
        }
    }
    files.sort();
    Ok(files)
}

fn id_of(path: &Path) -> String {
    let suite = path.to_string_lossy().strip_suffix(&format!(".{SUITE_EXTENSION}")).map(PathBuf::from);
    let without = suite.unwrap_or_else(|| path.with_extension(""));
    let text = without.to_string_lossy().replace('\\', "/");
    text.trim_start_matches("./").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_drop_the_extension_and_leading_dot() {
        assert_eq!(id_of(Path::new("./math_guy/basic.hocon")), "math_guy/basic");
        assert_eq!(id_of(Path::new("case.hocon")), "case");
        assert_eq!(id_of(Path::new("./suites/alerts.suite.toml")), "suites/alerts");
    }

    #[test]
    fn extensions_are_matched_on_the_whole_name() {
        assert!(has_extension(Path::new("a/alerts.suite.toml"), "suite.toml"));
        assert!(!has_extension(Path::new("a/assay.toml"), "suite.toml"));
        assert!(!has_extension(Path::new("a/.suite.toml"), "suite.toml"));
        assert!(!has_extension(Path::new("a/mysuite.toml"), "suite.toml"));
        assert!(has_extension(Path::new("basic.hocon"), "hocon"));
        assert!(!has_extension(Path::new("hocon"), "hocon"));
    }
}
