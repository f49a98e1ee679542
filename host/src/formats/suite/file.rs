//! A suite file (`*.suite.toml`) read and checked: the spec files it names,
//! how a spec line becomes a request (connection or agent, `text`) and
//! checks (`[[checks]]` with `key`, `target`, `expected`, `gate`), and the
//! `[setup]` of each cluster state (a `command`, or an `opensearch` index
//! load; `skip`, `timeout_secs`, `env`). Everything that can be wrong with
//! the file itself is found here, before any spec line is read.

use crate::agent::shown_command;
use crate::case::{Connection, FileAccess, FileTrust, SuccessRatio, TooLarge};
use crate::check::Target;
use crate::errors::CaseErrorKind;
use crate::template::{FieldTemplate, ValueTemplate};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// The largest suite file read.
const MAX_SUITE_BYTES: u64 = 1 << 20;

/// How long a setup may run, by default.
pub const DEFAULT_SETUP_TIMEOUT: Duration = Duration::from_secs(300);

/// The spec field that names a line's cluster state.
pub const STATE_FIELD: &str = "clusterStateId";

/// A suite file, checked.
#[derive(Debug)]
pub struct SuiteFile {
    /// The spec files, resolved and sorted per pattern, in pattern order.
    pub specs: Vec<PathBuf>,
    /// The connection every case runs over.
    pub connection: Connection,
    /// The agent asked.
    pub agent: String,
    /// The request's text.
    pub text: FieldTemplate,
    /// The checks on the answer.
    pub checks: Vec<SuiteCheck>,
    /// How many samples run, and how many must pass.
    pub success_ratio: SuccessRatio,
    /// The bound on one sample.
    pub timeout: Option<Duration>,
    /// Request metadata.
    pub metadata: Vec<(String, String)>,
    /// What prepares each cluster state.
    pub setup: Option<Setup>,
    /// Where its spec files are opened (its trust's).
    pub access: FileAccess,
}

/// One `[[checks]]` entry.
#[derive(Debug)]
pub struct SuiteCheck {
    /// The matcher key as written (`not_` forms allowed).
    pub key: String,
    /// What it looks at.
    pub target: Target,
    /// The expected value, templated.
    pub expected: ValueTemplate,
    /// Whether it decides pass or fail.
    pub gate: bool,
}

/// `[setup]`: what runs once per cluster state before its first case.
#[derive(Debug)]
pub struct Setup {
    /// The work.
    pub kind: SetupKind,
    /// States that need none.
    pub skip: Vec<String>,
    /// How long it may take.
    pub timeout: Duration,
    /// The folder of index groups (`<state>/<index>/documents.ndjson`)
    /// whose documents the spec lines' date templates read: `[setup]
    /// indices`, else the `opensearch` loader's.
    pub indices: Option<PathBuf>,
    /// The time zone date templates are written in (`[setup] time_zone`,
    /// default UTC).
    pub time_zone: chrono_tz::Tz,
    /// Where its index groups are opened (the suite's trust's).
    pub access: FileAccess,
}

/// The kinds of setup.
#[derive(Debug)]
pub enum SetupKind {
    /// Nothing to prepare: `[setup]` names only `indices` (the documents
    /// of date templates) or `skip`.
    Nothing,
    /// A program and its arguments (templated with `{{clusterStateId}}`),
    /// started in the suite's folder with only the `env` variables (and a
    /// minimal `PATH`).
    Command {
        /// The program and its arguments.
        command: Vec<FieldTemplate>,
        /// The variables it gets from assay's environment.
        env: Vec<String>,
    },
    /// Every index under `indices/<state>/`, loaded into OpenSearch.
    OpenSearch {
        /// The server.
        url: String,
        /// The folder of index groups, resolved from the suite's folder
        /// (`opensearch.indices`, else `[setup] indices`).
        indices: PathBuf,
        /// Whether existing indices are deleted and created again.
        recreate: bool,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    specs: Vec<String>,
    connection: Option<String>,
    agent: Option<String>,
    text: String,
    #[serde(default)]
    checks: Vec<RawCheck>,
    success_ratio: Option<String>,
    timeout_secs: Option<f64>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    setup: Option<RawSetup>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    key: String,
    target: Option<String>,
    expected: toml::Value,
    gate: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetup {
    command: Option<Vec<String>>,
    opensearch: Option<RawOpenSearch>,
    #[serde(default)]
    skip: Vec<String>,
    timeout_secs: Option<f64>,
    #[serde(default)]
    env: Vec<String>,
    indices: Option<PathBuf>,
    time_zone: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOpenSearch {
    url: String,
    indices: Option<PathBuf>,
    #[serde(default)]
    recreate: bool,
}

fn invalid(path: &str, message: impl Into<String>) -> CaseErrorKind {
    CaseErrorKind::Invalid { path: path.to_owned(), message: message.into() }
}

/// Reads and checks the suite file at `path`, which may do what `trust`
/// allows it (a data file: read spec files and indices in its own folder,
/// run no setup command).
pub fn read_suite_file(path: &Path, trust: &FileTrust<'_>) -> Result<SuiteFile, CaseErrorKind> {
    let text = trust.access().read_to_string(path, MAX_SUITE_BYTES).map_err(|e| match TooLarge::of(&e) {
        Some(size) => CaseErrorKind::TooLarge { size, cap: MAX_SUITE_BYTES, what: "suite files" },
        None => CaseErrorKind::Io(e.to_string()),
    })?;
    let raw: Raw = toml::from_str(&text).map_err(|e| CaseErrorKind::Toml(e.to_string().trim_end().to_owned()))?;
    let folder = path.parent().unwrap_or(Path::new(""));
    let specs = resolve_specs(folder, &raw.specs, trust)?;
    let (connection, agent) = match (&raw.connection, raw.agent) {
        (None, None) => {
            return Err(invalid(
                "(file)",
                "it names neither `connection` nor `agent`\n\nConsider `agent = \"echo\"` (an agent component, over \
                 direct) or `connection = \"NAME\"` (a [connections.NAME] of assay.toml)",
            ));
        }
        (None, Some(agent)) => (Connection::Direct, agent),
        (Some(name), agent) => {
            let connection = Connection::from_name(name)
                .ok_or_else(|| invalid("connection", format!("{name:?} cannot name a connection")))?;
            // A named connection answers whatever agent it is asked for;
            // its name stands in when the suite names none.
            let agent = agent.unwrap_or_else(|| name.clone());
            (connection, agent)
        }
    };
    let text = FieldTemplate::parse(&raw.text).map_err(|e| invalid("text", e))?;
    if raw.checks.is_empty() {
        return Err(invalid(
            "checks",
            "the suite has no [[checks]], so its cases would check nothing\n\nConsider\n[[checks]]\nkey = \"keywords\"\n\
             expected = \"{{expectedAnswer}}\"",
        ));
    }
    let checks = raw.checks.into_iter().enumerate().map(|(i, check)| read_check(i, check)).collect::<Result<_, _>>()?;
    let success_ratio = match raw.success_ratio {
        Some(ratio) => SuccessRatio::parse(&ratio).map_err(|e| invalid("success_ratio", e))?,
        None => SuccessRatio::default(),
    };
    let timeout = raw.timeout_secs.map(|s| seconds(s, "timeout_secs")).transpose()?;
    let setup = raw.setup.map(|setup| read_setup(folder, setup, trust)).transpose()?;
    Ok(SuiteFile {
        specs,
        connection,
        agent,
        text,
        checks,
        success_ratio,
        timeout,
        metadata: raw.metadata.into_iter().collect(),
        setup,
        access: trust.access().clone(),
    })
}

/// The files each pattern matches, relative to `folder`, sorted; a pattern
/// matching no file is an error (a typo would otherwise run nothing). The
/// folder a pattern starts from (before its first wildcard) is checked with
/// `trust` before anything is listed, so that a data file's pattern never
/// walks outside its folder (`/**/x`, `../../*`); the walk is cycle-safe
/// and goes through the trust's [`crate::case::FileAccess`], and each file
/// matched is checked too (a link out of the folder).
fn resolve_specs(folder: &Path, patterns: &[String], trust: &FileTrust<'_>) -> Result<Vec<PathBuf>, CaseErrorKind> {
    if patterns.is_empty() {
        return Err(invalid("specs", "it is empty; name the spec files, e.g. specs = [\"specs/*.jsonl\"]"));
    }
    let mut files = Vec::new();
    for (i, pattern) in patterns.iter().enumerate() {
        let at = format!("specs[{i}]");
        let full = folder.join(pattern);
        let text = full.to_string_lossy();
        glob::Pattern::new(&text).map_err(|e| invalid(&at, format!("`{pattern}` is not a glob pattern: {e}")))?;
        let start: PathBuf = full
            .components()
            .take_while(|c| !matches!(c, Component::Normal(name) if name.to_string_lossy().contains(['*', '?', '['])))
            .collect();
        trust.read(&start)?;
        let mut matched = crate::case::glob_files(trust.access(), &text).map_err(|e| invalid(&at, e.to_string()))?;
        for path in &matched {
            trust.read(path)?;
        }
        if matched.is_empty() {
            return Err(invalid(&at, format!("`{pattern}` matches no file in `{}`", display_folder(folder))));
        }
        matched.sort();
        for path in matched {
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    Ok(files)
}

/// A folder for messages: `.` for the current one.
pub(super) fn display_folder(folder: &Path) -> String {
    if folder.as_os_str().is_empty() { ".".into() } else { folder.display().to_string() }
}

fn read_check(index: usize, raw: RawCheck) -> Result<SuiteCheck, CaseErrorKind> {
    let at = format!("checks[{index}]");
    let target = match raw.target.as_deref() {
        None | Some("text") => Target::Text,
        Some(target) => {
            let mut path = target.split('.');
            let root = path.next().unwrap_or_default();
            let keys: Vec<String> = path.map(str::to_owned).collect();
            match root {
                _ if keys.iter().any(String::is_empty) => {
                    return Err(invalid(&format!("{at}.target"), format!("`{target}` has an empty key")));
                }
                "sly_data" | "structure" if keys.is_empty() => {
                    return Err(invalid(
                        &format!("{at}.target"),
                        format!("`{target}` names no key; write `{target}.KEY` (dots for nested keys)"),
                    ));
                }
                "sly_data" => Target::SlyData(keys),
                "structure" => Target::Structure(keys),
                other => {
                    return Err(CaseErrorKind::UnknownKey {
                        path: format!("{at}.target"),
                        key: other.to_owned(),
                        what: "target",
                        suggestion: crate::suggest::nearest(other, ["text", "sly_data", "structure"]),
                        known: "text, sly_data.KEY, structure.KEY".into(),
                    });
                }
            }
        }
    };
    let expected = serde_json::to_value(&raw.expected)
        .map_err(|e| invalid(&format!("{at}.expected"), format!("it cannot be JSON: {e}")))?;
    let expected = ValueTemplate::parse(&expected, &format!("{at}.expected")).map_err(|e| invalid(&at, e))?;
    Ok(SuiteCheck { key: raw.key, target, expected, gate: raw.gate.unwrap_or(true) })
}

fn read_setup(folder: &Path, raw: RawSetup, trust: &FileTrust<'_>) -> Result<Setup, CaseErrorKind> {
    let folder_of_groups = |indices: &Path, at: &str| {
        let indices = folder.join(indices);
        trust.read(&indices)?;
        if trust.access().is_dir(&indices) {
            Ok(indices)
        } else {
            Err(invalid(
                at,
                format!(
                    "`{}` is not a folder (it holds one folder of index groups per cluster state)",
                    indices.display()
                ),
            ))
        }
    };
    let mut indices = raw.indices.as_deref().map(|indices| folder_of_groups(indices, "setup.indices")).transpose()?;
    let time_zone = match &raw.time_zone {
        None => chrono_tz::UTC,
        Some(name) => crate::formats::suite::dates::parse_time_zone(name).map_err(|e| invalid("setup.time_zone", e))?,
    };
    let kind = match (raw.command, raw.opensearch) {
        (Some(_), Some(_)) => {
            return Err(invalid("setup", "it sets both `command` and `opensearch`: choose one"));
        }
        // Only the documents for date templates (`indices`), or only the
        // states that need nothing (`skip`): nothing is prepared.
        (None, None) if indices.is_some() || !raw.skip.is_empty() => SetupKind::Nothing,
        (None, None) => {
            return Err(invalid(
                "setup",
                "it sets neither `command`, `opensearch` nor `indices`\n\nConsider command = [\"./setup.sh\", \
                 \"{{clusterStateId}}\"], or opensearch = { url = \"http://localhost:9200\", indices = \"data/indices\" }",
            ));
        }
        (Some(command), None) => {
            trust.program(&shown_command(&command))?;
            if command.is_empty() || command[0].is_empty() {
                return Err(invalid(
                    "setup.command",
                    "it names no program, e.g. [\"./setup.sh\", \"{{clusterStateId}}\"]",
                ));
            }
            if let Some(name) = raw.env.iter().find(|name| name.is_empty() || name.contains(['=', '\0'])) {
                return Err(invalid("setup.env", format!("{name:?} is not an environment variable name")));
            }
            let command = command
                .iter()
                .enumerate()
                .map(|(i, word)| {
                    let at = format!("setup.command[{i}]");
                    let template = FieldTemplate::parse(word).map_err(|e| invalid(&at, e))?;
                    // A setup runs once per state, not per line: only the
                    // state can be in it.
                    if let Some(field) = template.fields().find(|field| *field != STATE_FIELD) {
                        return Err(invalid(
                            &at,
                            format!("`{{{{{field}}}}}`: a setup runs once per cluster state, so only `{{{{{STATE_FIELD}}}}}` can be in it"),
                        ));
                    }
                    Ok(template)
                })
                .collect::<Result<_, _>>()?;
            for name in &raw.env {
                trust.secret(name)?;
            }
            SetupKind::Command { command, env: raw.env }
        }
        (None, Some(opensearch)) => {
            if !raw.env.is_empty() {
                return Err(invalid("setup.env", "it applies to a `command` setup only"));
            }
            let parsed = reqwest::Url::parse(&opensearch.url)
                .map_err(|e| invalid("setup.opensearch.url", format!("`{}` is not a URL: {e}", opensearch.url)))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(invalid("setup.opensearch.url", format!("`{}` is not an http(s) URL", opensearch.url)));
            }
            trust.url(&opensearch.url);
            let loaded = match &opensearch.indices {
                Some(own) => folder_of_groups(own, "setup.opensearch.indices")?,
                None => indices.clone().ok_or_else(|| {
                    invalid(
                        "setup.opensearch",
                        "it names no folder of index groups\n\nConsider indices = \"data/indices\" (in `opensearch`, or in [setup])",
                    )
                })?,
            };
            indices.get_or_insert_with(|| loaded.clone());
            SetupKind::OpenSearch { url: opensearch.url, indices: loaded, recreate: opensearch.recreate }
        }
    };
    let timeout = match raw.timeout_secs {
        Some(s) => seconds(s, "setup.timeout_secs")?,
        None => DEFAULT_SETUP_TIMEOUT,
    };
    Ok(Setup { kind, skip: raw.skip, timeout, indices, time_zone, access: trust.access().clone() })
}

fn seconds(value: f64, at: &str) -> Result<Duration, CaseErrorKind> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| invalid(at, format!("{value} is not a positive number of seconds")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{Trust, UseKind};

    /// The error `suite` (after a `specs` line that matches) reads as, in
    /// a trusted file.
    fn error_of(suite: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.jsonl"), "{\"id\": 1}\n").unwrap();
        let path = dir.path().join("t.suite.toml");
        std::fs::write(&path, format!("specs = [\"*.jsonl\"]\n{suite}")).unwrap();
        let trust = Trust::new(dir.path(), &["*.suite.toml".into()], None).unwrap();
        read_suite_file(&path, &trust.of(&path)).unwrap_err().to_string()
    }

    #[test]
    fn a_data_suite_runs_no_setup_command_and_reads_only_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("cases")).unwrap();
        std::fs::write(dir.path().join("cases/a.jsonl"), "{\"id\": 1}\n").unwrap();
        std::fs::write(dir.path().join("secret.env"), "{\"id\": 1}\n").unwrap();
        let path = dir.path().join("cases/t.suite.toml");
        let read = |suite: &str, trust: &Trust| {
            std::fs::write(&path, suite).unwrap();
            read_suite_file(&path, &trust.of(&path)).map(|_| ()).map_err(|e| e.to_string())
        };
        let data = Trust::new(dir.path(), &[], None).unwrap();
        let trusted = Trust::new(dir.path(), &["cases/*.suite.toml".into()], None).unwrap();
        let command = format!(
            "specs = [\"*.jsonl\"]\nagent = \"echo\"\ntext = \"q\"\n{CHECK}[setup]\ncommand = [\"sh\", \"-c\", \"id\"]\n\
             env = [\"AWS_SECRET_ACCESS_KEY\"]\n"
        );
        let error = read(&command, &data).unwrap_err();
        assert!(error.contains("it runs `sh -c id`"), "{error}");
        assert!(error.contains("commands = [\"cases/t.suite.toml\"]"), "{error}");
        read(&command, &trusted).unwrap();
        let kinds: Vec<UseKind> = trusted.uses().into_iter().map(|u| u.kind).collect();
        assert_eq!(kinds, [UseKind::Program("sh -c id".into()), UseKind::Secret("AWS_SECRET_ACCESS_KEY".into())]);
        // A file out of the folder is refused by name; a pattern out of it
        // before anything is listed (the folder it starts from is named).
        for (outside, named) in [("../secret.env", "secret.env`"), ("../*.env", "cases/..`")] {
            let error =
                read(&format!("specs = [\"{outside}\"]\nagent = \"echo\"\ntext = \"q\"\n{CHECK}"), &data).unwrap_err();
            assert!(error.contains("it reads `") && error.contains(named), "{error}");
        }
        let absolute =
            format!("specs = [{:?}]\nagent = \"echo\"\ntext = \"q\"\n{CHECK}", dir.path().join("secret.env"));
        assert!(read(&absolute, &data).unwrap_err().contains("it is data"));
        read(&absolute, &trusted).unwrap();
    }

    const CHECK: &str = "[[checks]]\nkey = \"value\"\nexpected = \"x\"\n";

    #[test]
    fn what_a_suite_file_gets_wrong_is_named_with_its_key() {
        assert!(error_of(&format!("text = \"q\"\n{CHECK}")).starts_with("invalid `(file)`: it names neither"));
        assert!(
            error_of("agent = \"echo\"\ntext = \"q\"\n").starts_with("invalid `checks`: the suite has no [[checks]]")
        );
        assert!(
            error_of(&format!("agent = \"echo\"\ntext = \"q\"\ncolour = 1\n{CHECK}"))
                .contains("unknown field `colour`")
        );
        let target = error_of(
            "agent = \"echo\"\ntext = \"q\"\n[[checks]]\nkey = \"value\"\ntarget = \"slydata.a\"\nexpected = 1\n",
        );
        assert_eq!(
            target,
            "unknown target `slydata` at `checks[0].target` (did you mean `sly_data`?); the known ones are text, \
             sly_data.KEY, structure.KEY"
        );
        let bare = error_of(
            "agent = \"echo\"\ntext = \"q\"\n[[checks]]\nkey = \"value\"\ntarget = \"structure\"\nexpected = 1\n",
        );
        assert_eq!(
            bare,
            "invalid `checks[0].target`: `structure` names no key; write `structure.KEY` (dots for nested keys)"
        );
        let both = format!(
            "agent = \"echo\"\ntext = \"q\"\n[setup]\ncommand = [\"./s\"]\nopensearch = {{ url = \"http://h\", indices = \".\" }}\n{CHECK}"
        );
        assert_eq!(error_of(&both), "invalid `setup`: it sets both `command` and `opensearch`: choose one");
        let per_line =
            format!("agent = \"echo\"\ntext = \"q\"\n[setup]\ncommand = [\"./s\", \"{{{{question}}}}\"]\n{CHECK}");
        assert_eq!(
            error_of(&per_line),
            "invalid `setup.command[1]`: `{{question}}`: a setup runs once per cluster state, so only \
             `{{clusterStateId}}` can be in it"
        );
        let ratio = format!("agent = \"echo\"\ntext = \"q\"\nsuccess_ratio = \"3/2\"\n{CHECK}");
        assert_eq!(error_of(&ratio), "invalid `success_ratio`: `3/2`: 3 passing samples out of 2 can never happen");
    }

    #[test]
    fn a_named_connection_stands_in_for_the_agent_and_checks_gate_by_default() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("specs")).unwrap();
        std::fs::write(dir.path().join("specs/b.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("specs/a.jsonl"), "").unwrap();
        let path = dir.path().join("t.suite.toml");
        let text = "specs = [\"specs/b.jsonl\", \"specs/*.jsonl\"]\nconnection = \"os-agent\"\ntext = \"{{question}}\"\n\
                    [[checks]]\nkey = \"rouge\"\ntarget = \"structure.answer.text\"\nexpected = { reference = \"{{a}}\" }\n\
                    gate = false\n[[checks]]\nkey = \"value\"\nexpected = 1\n";
        std::fs::write(&path, text).unwrap();
        let suite = read_suite_file(&path, &Trust::nothing().of(&path)).unwrap();
        // Patterns in order, each sorted, a file named twice read once.
        assert_eq!(suite.specs, [dir.path().join("specs/b.jsonl"), dir.path().join("specs/a.jsonl")]);
        assert_eq!(suite.connection, Connection::Named("os-agent".into()));
        assert_eq!(suite.agent, "os-agent");
        assert_eq!(suite.checks[0].target, Target::Structure(vec!["answer".into(), "text".into()]));
        assert!(!suite.checks[0].gate);
        assert!(suite.checks[1].gate);
        assert!(suite.setup.is_none());
    }
}
