//! A Python plugin's `requirements.txt`, read and checked before pip sees
//! it: [`Requirements::read`] passes requirements by name (`rouge==1.0.1`,
//! with markers and `--hash` options) and paths to wheels inside the
//! plugin's folder, and refuses, naming the line, what would change where
//! code comes from (`--index-url`, `--extra-index-url`, `--find-links`,
//! `--trusted-host`, a URL), build a package from source (`-e`,
//! `--no-binary`, per-requirement build options), or read a file the cache
//! key would not cover (`-r`, `-c`, a path leaving the folder). Where pip
//! fetches from is the user's pip configuration (`PIP_INDEX_URL`,
//! `pip.conf`), never a plugin folder's.

use crate::errors::{AuthoringError, RequirementsErrorKind};
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};

/// The file's name, next to `pyproject.toml`.
pub(super) const FILE: &str = "requirements.txt";

/// Options a line may be: they narrow what pip installs, never where from.
const ALLOWED_OPTIONS: [&str; 3] = ["--no-index", "--require-hashes", "--pre"];

/// A plugin's checked `requirements.txt`.
#[derive(Debug)]
pub(super) struct Requirements {
    /// The file.
    pub(super) path: PathBuf,
    /// Its text, as pip reads it.
    text: String,
    /// The wheels it names by path, relative to the plugin's folder.
    wheels: Vec<PathBuf>,
}

impl Requirements {
    /// `DIR/requirements.txt` checked, or `None` when there is none or it
    /// names no package (only comments or options).
    pub(super) fn read(dir: &Path) -> Result<Option<Requirements>, AuthoringError> {
        let path = dir.join(FILE);
        if !path.exists() {
            return Ok(None);
        }
        let fail = |kind| AuthoringError::Requirements { path: path.clone(), kind };
        let text = std::fs::read_to_string(&path).map_err(|e| fail(RequirementsErrorKind::Read(e)))?;
        let mut wheels = Vec::new();
        let mut packages = 0;
        for (line, content) in logical_lines(&text) {
            let refuse = |reason: String| fail(RequirementsErrorKind::Line { line, text: content.clone(), reason });
            if let Some(wheel) = check_line(dir, &content).map_err(refuse)? {
                wheels.push(wheel);
            }
            packages += usize::from(!content.starts_with('-'));
        }
        Ok((packages > 0).then_some(Requirements { path, text, wheels }))
    }

    /// What the installed packages are keyed by in the cache: `salt` (the
    /// tools and flags they are installed with), this file's text and the
    /// bytes of each wheel it names by path.
    pub(super) fn key(&self, dir: &Path, salt: &str) -> Result<String, AuthoringError> {
        let mut hash = Sha256::new();
        for part in [salt.as_bytes(), self.text.as_bytes()] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        for wheel in &self.wheels {
            let path = dir.join(wheel);
            let bytes = std::fs::read(&path).map_err(|cause| AuthoringError::Requirements {
                path: self.path.clone(),
                kind: RequirementsErrorKind::ReadWheel { wheel: path, cause },
            })?;
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(&bytes);
        }
        Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// The lines as pip reads them, numbered from 1 (a logical line's number is
/// its first physical line's): continuations (`\` at the end) joined,
/// comments (`#` at the start or after a space) and blank lines dropped.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (index, raw) in text.lines().enumerate() {
        let (number, mut joined) = pending.take().unwrap_or((index + 1, String::new()));
        if let Some(start) = raw.strip_suffix('\\') {
            joined.push_str(start);
            pending = Some((number, joined));
            continue;
        }
        joined.push_str(raw);
        let content = match joined.find('#').filter(|&at| at == 0 || joined[..at].ends_with([' ', '\t'])) {
            Some(at) => joined[..at].trim(),
            None => joined.trim(),
        };
        if !content.is_empty() {
            lines.push((number, content.to_owned()));
        }
    }
    if let Some((number, joined)) = pending {
        lines.push((number, joined.trim().to_owned()));
    }
    lines
}

/// The wheel a line names by path, `None` for a requirement by name or an
/// allowed option, or why the build refuses the line.
fn check_line(dir: &Path, line: &str) -> Result<Option<PathBuf>, String> {
    if line.starts_with('-') {
        return check_option(line).map(|()| None);
    }
    // pip's per-requirement options follow the requirement.
    let (requirement, options) = match line.find(" --").or_else(|| line.find("\t--")) {
        Some(at) => (line[..at].trim(), &line[at..]),
        None => (line, ""),
    };
    let mut words = options.split_whitespace();
    while let Some(option) = words.next() {
        check_requirement_option(option)?;
        if option == "--hash" {
            words.next();
        }
    }
    let before_markers = requirement.split(';').next().expect("a first part").trim();
    if before_markers.contains("://") || before_markers.contains('@') {
        return Err("fetches a package from a URL, which a plugin's folder may not choose\n\nConsider the package by name (`NAME==VERSION`) from your index, or its wheel saved in the plugin's folder and listed by its path (`wheels/NAME-VERSION-py3-none-any.whl`)".to_owned());
    }
    let is_path = before_markers.contains(['/', '\\'])
        || before_markers.starts_with('.')
        || [".whl", ".zip", ".tar.gz", ".tar.bz2", ".tgz"].iter().any(|ext| before_markers.ends_with(ext));
    if is_path {
        return check_wheel_path(dir, before_markers).map(Some);
    }
    Ok(None)
}

/// An option after a requirement: `--hash` only.
fn check_requirement_option(option: &str) -> Result<(), String> {
    if option.starts_with("--hash=") || option == "--hash" {
        return Ok(());
    }
    Err(format!(
        "passes `{option}` to the package's build: `assay plugin build` installs wheels only, and builds nothing from source"
    ))
}

/// A line that is an option.
fn check_option(line: &str) -> Result<(), String> {
    let option = line.split(['=', ' ', '\t']).next().expect("a first part");
    if ALLOWED_OPTIONS.contains(&option) {
        return Ok(());
    }
    let elsewhere = "changes where pip fetches packages from, which a plugin's folder may not choose\n\nConsider setting your index in your own pip configuration (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL or pip.conf), which the build's pip reads, or saving the wheel in the plugin's folder and listing its path";
    let reason = match option {
        "-i" | "--index-url" | "--extra-index-url" | "-f" | "--find-links" => elsewhere.to_owned(),
        "--trusted-host" => "turns off HTTPS verification for a host, which a plugin's folder may not choose\n\nConsider setting it in your own pip configuration (PIP_TRUSTED_HOST or pip.conf) if you mean it".to_owned(),
        "-e" | "--editable" | "--no-binary" => "builds a package from source: `assay plugin build` installs pure-Python wheels only\n\nConsider listing the package by name, or saving its wheel (`pip wheel --no-deps PACKAGE`) in the plugin's folder and listing its path".to_owned(),
        "-r" | "--requirement" | "-c" | "--constraint" => format!("reads another file, which the packages' cache (keyed by this file's content) would not see change\n\nConsider listing its lines in {FILE} itself"),
        _ => format!("is an option `assay plugin build` does not pass to pip (it passes only {})", ALLOWED_OPTIONS.map(|o| format!("`{o}`")).join(", ")),
    };
    Err(reason)
}

/// A path to a wheel: relative, inside the plugin's folder (symbolic links
/// resolved), a `.whl` file.
fn check_wheel_path(dir: &Path, path: &str) -> Result<PathBuf, String> {
    let relative = Path::new(path);
    let leaves = relative.is_absolute()
        || relative
            .components()
            .any(|part| matches!(part, Component::ParentDir | Component::RootDir | Component::Prefix(_)));
    if leaves {
        return Err("is a path leaving the plugin's folder\n\nConsider copying the wheel into the folder and listing its path from there (`wheels/NAME-VERSION-py3-none-any.whl`)".to_owned());
    }
    if !path.ends_with(".whl") {
        return Err("is not a wheel (`.whl`): `assay plugin build` installs pure-Python wheels only, and builds nothing from source\n\nConsider building its wheel (`pip wheel --no-deps PATH`) and listing the wheel".to_owned());
    }
    let inside = match (dir.join(relative).canonicalize(), dir.canonicalize()) {
        (Ok(file), Ok(folder)) => file.starts_with(folder) && file.is_file(),
        _ => return Err(format!("names a wheel that is not in `{}`", dir.display())),
    };
    if !inside {
        return Err(
            "is a link leading out of the plugin's folder\n\nConsider copying the wheel into the folder".to_owned()
        );
    }
    Ok(relative.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` as `requirements.txt` of a folder holding `wheels/ok-1.0-py3-none-any.whl`.
    fn read(text: &str) -> (tempfile::TempDir, Result<Option<Requirements>, AuthoringError>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("wheels")).unwrap();
        std::fs::write(dir.path().join("wheels/ok-1.0-py3-none-any.whl"), "a wheel").unwrap();
        std::fs::write(dir.path().join(FILE), text).unwrap();
        let read = Requirements::read(dir.path());
        (dir, read)
    }

    /// The refusal of `text`, which must be of its line `line`.
    fn refusal(text: &str, line: usize) -> String {
        let (dir, read) = read(text);
        let error = read.unwrap_err();
        assert!(error.is_usage(), "{error}");
        let message = error.to_string();
        let prefix = format!("`{}`: line {line} ", dir.path().join(FILE).display());
        assert!(message.starts_with(&prefix), "{message}");
        message[prefix.len()..].to_owned()
    }

    #[test]
    fn no_requirements_file_or_one_naming_no_package_is_no_requirements() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Requirements::read(dir.path()).unwrap().is_none());
        assert!(read("# nothing yet\n\n--no-index\n").1.unwrap().is_none());
    }

    #[test]
    fn names_versions_markers_hashes_and_wheels_in_the_folder_pass() {
        let text = "# metrics\nrouge==1.0.1  # pure Python\nsix>=1.14 ; python_version >= \"3\"\n\
                    absl-py==2.1.0 \\\n    --hash=sha256:abc\n--require-hashes\n--no-index\n\
                    ./wheels/ok-1.0-py3-none-any.whl\nwheels/ok-1.0-py3-none-any.whl\n";
        let (_dir, read) = read(text);
        let read = read.unwrap().unwrap();
        assert_eq!(
            read.wheels,
            vec![PathBuf::from("./wheels/ok-1.0-py3-none-any.whl"), "wheels/ok-1.0-py3-none-any.whl".into()]
        );
    }

    #[test]
    fn options_that_choose_where_code_comes_from_are_refused_naming_the_line() {
        for option in [
            "--index-url https://evil.example/simple",
            "-i https://x",
            "--extra-index-url=https://x",
            "--find-links ./wheels",
            "-f x",
        ] {
            let reason = refusal(&format!("six\n{option}\n"), 2);
            assert!(reason.starts_with(&format!("`{option}` changes where pip fetches packages from, which a plugin's folder may not choose\n\nConsider setting your index in your own pip configuration")), "{reason}");
        }
        let reason = refusal("--trusted-host evil.example\n", 1);
        assert!(reason.starts_with("`--trusted-host evil.example` turns off HTTPS verification"), "{reason}");
        for url in [
            "six @ https://evil.example/six.whl",
            "https://evil.example/six-1.0-py3-none-any.whl",
            "git+https://x/y.git#egg=y",
        ] {
            let reason = refusal(&format!("{url}\n"), 1);
            assert!(reason.contains("fetches a package from a URL"), "{url}: {reason}");
        }
    }

    #[test]
    fn builds_from_source_and_other_files_are_refused() {
        assert!(
            refusal("-e .\n", 1).starts_with(
                "`-e .` builds a package from source: `assay plugin build` installs pure-Python wheels only"
            )
        );
        assert!(refusal("--no-binary :all:\n", 1).contains("builds a package from source"));
        assert!(
            refusal("six --config-settings=x=y\n", 1).contains("passes `--config-settings=x=y` to the package's build")
        );
        assert!(refusal("-r other.txt\n", 1).starts_with("`-r other.txt` reads another file, which the packages' cache (keyed by this file's content) would not see change\n\nConsider listing its lines in requirements.txt itself"));
        assert!(refusal("\n\n-c constraints.txt\n", 3).contains("reads another file"));
        assert!(refusal("--user\n", 1).starts_with("`--user` is an option `assay plugin build` does not pass to pip (it passes only `--no-index`, `--require-hashes`, `--pre`)"));
        assert!(refusal("./src/pkg\n", 1).starts_with("`./src/pkg` is not a wheel (`.whl`)"));
        assert!(refusal("pkg-1.0.tar.gz\n", 1).contains("is not a wheel"));
    }

    #[test]
    fn a_wheel_path_leaving_the_folder_is_refused() {
        for path in ["../x-1.0-py3-none-any.whl", "/tmp/x-1.0-py3-none-any.whl", "wheels/../../x-1.0-py3-none-any.whl"]
        {
            let reason = refusal(&format!("{path}\n"), 1);
            assert!(reason.starts_with(&format!("`{path}` is a path leaving the plugin's folder")), "{reason}");
        }
        assert!(refusal("wheels/gone-1.0-py3-none-any.whl\n", 1).contains("names a wheel that is not in"));
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::fs::write(outside.path().join("x-1.0-py3-none-any.whl"), "w").unwrap();
            let (dir, _) = read("");
            std::os::unix::fs::symlink(
                outside.path().join("x-1.0-py3-none-any.whl"),
                dir.path().join("x-1.0-py3-none-any.whl"),
            )
            .unwrap();
            std::fs::write(dir.path().join(FILE), "x-1.0-py3-none-any.whl\n").unwrap();
            let error = Requirements::read(dir.path()).unwrap_err().to_string();
            assert!(error.contains("is a link leading out of the plugin's folder"), "{error}");
        }
    }

    #[test]
    fn the_key_changes_with_the_text_the_wheels_and_the_salt() {
        let (dir, read) = read("six==1.17.0\nwheels/ok-1.0-py3-none-any.whl\n");
        let requirements = read.unwrap().unwrap();
        let key = requirements.key(dir.path(), "a").unwrap();
        assert_eq!(key.len(), 64);
        assert_eq!(key, requirements.key(dir.path(), "a").unwrap());
        assert_ne!(key, requirements.key(dir.path(), "b").unwrap());
        std::fs::write(dir.path().join("wheels/ok-1.0-py3-none-any.whl"), "another wheel").unwrap();
        assert_ne!(key, requirements.key(dir.path(), "a").unwrap());
        std::fs::write(dir.path().join(FILE), "six==1.16.0\n").unwrap();
        let other = Requirements::read(dir.path()).unwrap().unwrap();
        assert_ne!(other.key(dir.path(), "a").unwrap(), requirements.key(dir.path(), "a").unwrap());
    }
}
