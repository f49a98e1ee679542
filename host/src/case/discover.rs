//! Finds test case files: a single file, a directory (recursively, every
//! `*.hocon`), or a glob pattern. Each file gets a stable case id.

use crate::errors::DiscoverError;
use std::path::{Path, PathBuf};

/// A test case file and the id its case will have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseFile {
    /// Where the file is.
    pub path: PathBuf,
    /// The case id: the path relative to the directory it was found in (or
    /// as given, for a file or glob), without the `.hocon` extension, with
    /// `/` separators.
    pub id: String,
}

/// The extension of neuro-san test case files.
const CASE_EXTENSIONS: &[&str] = &["hocon"];

/// The extensions of scenario and validation files.
pub const SCENARIO_EXTENSIONS: &[&str] = &["yaml", "yml", "hocon", "json"];

/// Finds every test case file named by `inputs`, in a stable order (each
/// input's files sorted by path; inputs in the order given; duplicates
/// dropped). Directories are searched for `*.hocon`.
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
        let mut paths = Vec::new();
        walk(input, extensions, &mut paths)
            .map_err(|e| DiscoverError::Io { path: input.to_path_buf(), error: e.to_string() })?;
        paths.sort();
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
        let pattern = glob::glob(&text)
            .map_err(|e| DiscoverError::BadGlob { pattern: text.to_string(), error: e.to_string() })?;
        let mut paths: Vec<PathBuf> = pattern.filter_map(Result::ok).filter(|p| p.is_file()).collect();
        paths.sort();
        if paths.is_empty() {
            return Err(DiscoverError::NoMatch { pattern: text.to_string() });
        }
        return Ok(paths.into_iter().map(|path| CaseFile { id: id_of(&path), path }).collect());
    }
    Err(DiscoverError::NotFound { path: input.to_path_buf() })
}

/// Collects every file under `dir` with one of `extensions`, skipping hidden
/// entries.
fn walk(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if entry.file_type()?.is_dir() || (entry.file_type()?.is_symlink() && path.is_dir()) {
            walk(&path, extensions, out)?;
        } else if path.extension().is_some_and(|e| extensions.iter().any(|x| e == *x)) {
            out.push(path);
        }
    }
    Ok(())
}

fn id_of(path: &Path) -> String {
    let without = path.with_extension("");
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
    }
}
