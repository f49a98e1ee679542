//! The trust boundary: every file discovery finds is data unless the user
//! trusted it. Data may not run a program (a suite's `[setup] command`,
//! promptfoo's `exec:`), read a file outside its own folder (a suite's
//! `specs` and `indices`), read an environment variable beyond the
//! case-file rules of [`CaseEnv`] (`setup.env`, `apiKeyEnvar`), or send a
//! credential to a URL it names (`apiBaseUrl` with a key from the
//! environment).
//!
//! A file is trusted through `assay.toml` (trusted like a Makefile: its
//! `[trust] commands` globs, from the project's folder) or, for one run,
//! with `--allow-commands` (`ASSAY_ALLOW_COMMANDS=1`). A format asks
//! [`Trust::of`] for a file's [`FileTrust`] and asks it before each such
//! use: an untrusted use is [`CaseErrorKind::Untrusted`], which names the
//! use and exactly how to allow it; a trusted one is recorded, so that
//! `assay plan` can say, before anything runs, every program, secret name
//! and outside URL the run would use ([`Trust::uses`]).
//!
//! A trust also says where files are opened ([`FileAccess`]): a format
//! reads every file through [`FileTrust::access`], which `assay serve`
//! confines beneath its root ([`Trust::beneath`]).

use crate::case::{CaseEnv, FileAccess};
use crate::errors::CaseErrorKind;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Who trusts which files, what the trusted ones were seen to use, and
/// where files are opened. A clone shares the record of uses.
#[derive(Clone, Debug, Default)]
pub struct Trust {
    policy: Arc<Policy>,
    /// What the files read so far use, in the order seen.
    uses: Arc<Mutex<Vec<Use>>>,
    /// Where the files are opened.
    access: FileAccess,
}

/// Which files are trusted.
#[derive(Clone, Debug, Default)]
struct Policy {
    /// The folder `patterns` start from (`assay.toml`'s), absolute.
    root: PathBuf,
    /// `[trust] commands`, as written and compiled.
    patterns: Vec<(String, glob::Pattern)>,
    /// What trusts every file, if anything does (`--allow-commands`).
    everything: Option<&'static str>,
}

/// Something a file uses that only a trusted file may.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Use {
    /// The file.
    pub file: PathBuf,
    /// What it uses.
    pub kind: UseKind,
    /// Whether the file is trusted.
    pub trusted: bool,
    /// Whether it may (a trusted file may do anything; a data file what
    /// data may).
    pub allowed: bool,
}

/// The kinds of [`Use`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UseKind {
    /// A program it runs, as shown to the user.
    Program(String),
    /// An environment variable it reads (a secret's name, never its value).
    Secret(String),
    /// A URL it names that receives a credential or data.
    Url(String),
    /// A file outside its folder that it reads.
    OutsideFile(PathBuf),
}

impl fmt::Display for UseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UseKind::Program(command) => write!(f, "runs `{command}`"),
            UseKind::Secret(name) => write!(f, "reads ${name}"),
            UseKind::Url(url) => write!(f, "sends to {url}"),
            UseKind::OutsideFile(path) => write!(f, "reads `{}`", path.display()),
        }
    }
}

/// The variable that trusts every file for one run.
pub const ALLOW_COMMANDS_VAR: &str = "ASSAY_ALLOW_COMMANDS";

impl Trust {
    /// Trusts the files matching `patterns` (globs relative to `root`, as
    /// `[trust] commands` writes them), or every file when `everything`
    /// names what allows that (`--allow-commands`).
    pub fn new(root: &Path, patterns: &[String], everything: Option<&'static str>) -> Result<Trust, String> {
        let root = absolute(root);
        let patterns = patterns
            .iter()
            .map(|text| {
                let full = root.join(text.trim_start_matches("./"));
                glob::Pattern::new(&full.to_string_lossy())
                    .map(|pattern| (text.clone(), pattern))
                    .map_err(|e| format!("`{text}` is not a glob pattern: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Trust { policy: Arc::new(Policy { root, patterns, everything }), ..Trust::default() })
    }

    /// The same trust, with every file opened beneath `root` (`assay
    /// serve`'s): see [`FileAccess::beneath`].
    /// The hints of its refusals name files relative to `root`.
    pub fn beneath(&self, root: &Path) -> std::io::Result<Trust> {
        let policy = Policy { root: root.to_path_buf(), ..(*self.policy).clone() };
        Ok(Trust { access: FileAccess::beneath(root)?, policy: Arc::new(policy), uses: self.uses.clone() })
    }

    /// Where files are opened.
    pub fn access(&self) -> &FileAccess {
        &self.access
    }

    /// Trusts no file (what `assay serve` starts with).
    pub fn nothing() -> Trust {
        Trust::default()
    }

    /// Whether every file is trusted.
    pub fn trusts_everything(&self) -> bool {
        self.policy.everything.is_some()
    }

    /// What the project says of `file`.
    pub fn of<'t>(&'t self, file: &Path) -> FileTrust<'t> {
        let lexical = absolute(file);
        let real = std::fs::canonicalize(file).ok();
        let matches = |path: &Path| {
            let options = glob::MatchOptions { require_literal_separator: true, ..Default::default() };
            self.policy.patterns.iter().any(|(_, pattern)| pattern.matches_path_with(path, options))
        };
        let trusted = self.policy.everything.is_some() || matches(&lexical) || real.as_deref().is_some_and(matches);
        FileTrust { trust: self, file: file.to_path_buf(), lexical, trusted }
    }

    /// Everything the files read so far use, in the order seen, each once.
    pub fn uses(&self) -> Vec<Use> {
        self.uses.lock().expect("the uses' lock").clone()
    }

    fn record(&self, used: Use) {
        let mut uses = self.uses.lock().expect("the uses' lock");
        if !uses.contains(&used) {
            uses.push(used);
        }
    }
}

/// What the project says of one file: trusted or data.
#[derive(Debug)]
pub struct FileTrust<'t> {
    trust: &'t Trust,
    file: PathBuf,
    /// The file's absolute path.
    lexical: PathBuf,
    trusted: bool,
}

impl FileTrust<'_> {
    /// Whether the file is trusted.
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// Where the file, and what it names, are opened.
    pub fn access(&self) -> &FileAccess {
        &self.trust.access
    }

    /// The file runs `command` (as shown to the user).
    pub fn program(&self, command: &str) -> Result<(), CaseErrorKind> {
        self.allow(UseKind::Program(command.to_owned()), None)
    }

    /// The file reads the variable `name`: a data file only what `env`
    /// lets case files read.
    pub fn variable(&self, name: &str, env: &CaseEnv) -> Result<(), CaseErrorKind> {
        let used = UseKind::Secret(name.to_owned());
        if env.is_visible(name) {
            self.record(used, true);
            return Ok(());
        }
        self.allow(used, Some(name))
    }

    /// The file hands the variable `name` to a program it runs.
    pub fn secret(&self, name: &str) -> Result<(), CaseErrorKind> {
        self.allow(UseKind::Secret(name.to_owned()), None)
    }

    /// The file sends a credential (from the variable `name`) to `url`, a
    /// URL it names. A data file may send a variable case files may read.
    pub fn credential_to(&self, name: &str, url: &str, env: &CaseEnv) -> Result<(), CaseErrorKind> {
        self.url(url);
        if env.is_visible(name) {
            return self.variable(name, env);
        }
        self.allow(UseKind::Secret(format!("{name} (sent to {url}, a URL the file names)")), Some(name))
    }

    /// The file names `url` to send data to (recorded for `assay plan`).
    pub fn url(&self, url: &str) {
        self.record(UseKind::Url(url.to_owned()), true);
    }

    /// The file reads `path`: a data file only inside its own folder (after
    /// every link is followed).
    pub fn read(&self, path: &Path) -> Result<(), CaseErrorKind> {
        let folder = self.lexical.parent().unwrap_or(Path::new("/"));
        let real_folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| absolute(path));
        if real.starts_with(&real_folder) {
            return Ok(());
        }
        self.allow(UseKind::OutsideFile(path.to_path_buf()), None)
    }

    fn record(&self, kind: UseKind, allowed: bool) {
        let used = Use { file: self.file.clone(), kind, trusted: self.trusted, allowed: allowed || self.trusted };
        self.trust.record(used);
    }

    /// Records `used`, and refuses it when the file is data.
    fn allow(&self, used: UseKind, variable: Option<&str>) -> Result<(), CaseErrorKind> {
        self.record(used.clone(), self.trusted);
        if self.trusted {
            return Ok(());
        }
        let relative = self.lexical.strip_prefix(&self.trust.policy.root).unwrap_or(&self.lexical);
        let pattern = relative.to_string_lossy().replace('\\', "/");
        let mut how = format!(
            "trust the file in assay.toml (a file trusted like a Makefile: it may run programs and read secrets):\n\
             [trust]\ncommands = [\"{pattern}\"]\nor pass --allow-commands ({ALLOW_COMMANDS_VAR}=1) to trust every \
             file of one run"
        );
        if let Some(name) = variable {
            how.push_str(&format!(
                ", or let case files read the variable: [cases] allow_env = [\"{name}\"] or --allow-env {name}"
            ));
        }
        Err(CaseErrorKind::Untrusted { what: used.to_string(), how })
    }
}

/// `path` made absolute and tidied (`.` and `..` resolved as text).
fn absolute(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(allow: &[&str]) -> CaseEnv {
        CaseEnv::new(
            [("SECRET", "s"), ("ASSAY_CASE_X", "x")],
            allow.iter().map(|s| s.to_string()),
            Vec::<String>::new(),
        )
    }

    #[test]
    fn a_file_is_data_unless_a_pattern_or_the_flag_trusts_it() {
        let root = Path::new("/project");
        let trust = Trust::new(root, &["evals/**/*.suite.toml".into(), "./promptfooconfig.yaml".into()], None).unwrap();
        assert!(trust.of(Path::new("/project/evals/a/b.suite.toml")).is_trusted());
        assert!(trust.of(Path::new("/project/promptfooconfig.yaml")).is_trusted());
        assert!(trust.of(Path::new("/project/evals/../evals/x.suite.toml")).is_trusted());
        assert!(!trust.of(Path::new("/project/contrib/x.suite.toml")).is_trusted());
        assert!(!trust.of(Path::new("/project/sub/promptfooconfig.yaml")).is_trusted());
        assert!(!trust.of(Path::new("/project/evals/../contrib/x.suite.toml")).is_trusted());
        let everything = Trust::new(root, &[], Some("--allow-commands")).unwrap();
        assert!(everything.of(Path::new("/anywhere/x.suite.toml")).is_trusted());
        assert!(!Trust::nothing().of(Path::new("/project/x.suite.toml")).is_trusted());
    }

    #[test]
    fn a_refusal_names_the_use_and_how_to_allow_it() {
        let trust = Trust::new(Path::new("/project"), &[], None).unwrap();
        let file = trust.of(Path::new("/project/contrib/x.suite.toml"));
        let error = file.program("sh -c id").unwrap_err().to_string();
        assert!(error.contains("runs `sh -c id`"), "{error}");
        assert!(error.contains("commands = [\"contrib/x.suite.toml\"]"), "{error}");
        assert!(error.contains("--allow-commands") && error.contains("ASSAY_ALLOW_COMMANDS=1"), "{error}");
        let error = file.variable("SECRET", &env(&[])).unwrap_err().to_string();
        assert!(error.contains("$SECRET") && error.contains("allow_env = [\"SECRET\"]"), "{error}");
        assert!(file.variable("ASSAY_CASE_X", &env(&[])).is_ok());
        assert!(file.variable("SECRET", &env(&["SECRET"])).is_ok());
        let error = file.credential_to("SECRET", "http://evil/v1", &env(&[])).unwrap_err().to_string();
        assert!(error.contains("SECRET (sent to http://evil/v1"), "{error}");
        let uses = trust.uses();
        assert!(uses.iter().any(|u| u.kind == UseKind::Program("sh -c id".into()) && !u.allowed));
        assert!(uses.iter().any(|u| u.kind == UseKind::Url("http://evil/v1".into())));
    }

    #[test]
    fn a_data_file_reads_only_inside_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let suite = dir.path().join("cases/x.suite.toml");
        std::fs::create_dir_all(dir.path().join("cases/specs")).unwrap();
        std::fs::write(dir.path().join("cases/specs/a.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("outside.env"), "").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("outside.env"), dir.path().join("cases/specs/link.jsonl")).unwrap();
        let trust = Trust::nothing();
        let file = trust.of(&suite);
        assert!(file.read(&dir.path().join("cases/specs/a.jsonl")).is_ok());
        assert!(file.read(&dir.path().join("cases/specs/../../outside.env")).is_err());
        assert!(file.read(Path::new("/etc/passwd")).is_err());
        #[cfg(unix)]
        assert!(file.read(&dir.path().join("cases/specs/link.jsonl")).is_err());
    }
}
