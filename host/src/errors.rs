//! Every error type of the library, in one place. Messages are lowercase
//! fragments that read after "failed to"; where a common mistake is known,
//! they end with a "Consider …" suggestion.
//!
//! A context struct's message includes its kind's, so the kind is not also
//! its `source()`: printed as a chain (`{:#}`), it would say it twice.

use std::fmt;
use std::time::Duration;
use thiserror::Error;

/// What a component was loaded as: the sandbox hosts both kinds alike, and
/// messages say which one failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComponentRole {
    /// A matcher plugin (`assay:plugin`).
    Plugin,
    /// An agent (`assay:agent`).
    Agent,
}

impl fmt::Display for ComponentRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ComponentRole::Plugin => "plugin",
            ComponentRole::Agent => "agent",
        })
    }
}

/// A component (a matcher plugin or an agent) could not be loaded.
#[derive(Debug, Error)]
#[error("failed to load {role} {component}: {kind}")]
pub struct ComponentLoadError {
    /// What it was loaded as.
    pub role: ComponentRole,
    /// Which component: its source (file path or built-in name).
    pub component: String,
    /// What went wrong.
    pub kind: ComponentLoadErrorKind,
}

/// Why a component could not be loaded.
#[derive(Debug, Error)]
pub enum ComponentLoadErrorKind {
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    /// The pinned sha256 does not match.
    #[error(
        "its sha256 is {actual}, but assay.toml pins {pinned}; refusing to load it\n\nConsider `assay plugins --lock` \
         to pin the file as it is now, if you trust the change"
    )]
    Sha256Mismatch {
        /// The pinned hash.
        pinned: String,
        /// The file's hash.
        actual: String,
    },
    /// Not a valid component.
    #[error("it is not a valid WebAssembly component: {0}")]
    NotAComponent(String),
    /// An import the capability policy refuses.
    #[error("{0}")]
    Denied(Denied),
    /// Linking failed (an import the host cannot satisfy).
    #[error("its imports cannot be satisfied: {0}")]
    Link(String),
    /// The exports are not the interface it was loaded as.
    #[error("it does not export {interface}: {cause}")]
    Exports {
        /// The interface expected, e.g. `assay:plugin/matcher@0.1.0`.
        interface: &'static str,
        /// What is missing or mismatched.
        cause: String,
    },
    /// Instantiating faulted.
    #[error("instantiating it {0}")]
    Instantiate(Fault),
    /// `describe()` faulted.
    #[error("its describe() {0}")]
    Describe(Fault),
    /// `describe()` returned something invalid.
    #[error("its describe() is invalid: {0}")]
    BadDescription(String),
}

/// An import the capability policy refuses.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct Denied {
    /// What the component was loaded as: agents are granted nothing.
    pub role: ComponentRole,
    /// The import's full name, e.g. `assay:plugin/judge@0.1.0`.
    pub import: String,
    /// The grant that would allow it, when one exists.
    pub grant: Option<&'static str>,
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let role = self.role;
        match self.grant {
            Some(grant) => write!(
                f,
                "it imports `{}`, which its grants do not cover.\n\nConsider granting it: grants = [\"{grant}\"] in the {role}'s [plugins.NAME] entry of assay.toml",
                self.import
            ),
            None if self.import.starts_with("wasi:") => {
                write!(f, "it imports `{}`: {role}s get no HTTP access, and no grant allows it", self.import)
            }
            None => write!(f, "it imports `{}`, which assay does not provide to {role}s", self.import),
        }
    }
}

/// Why a call into a component did not return normally.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Fault {
    /// The wall-clock deadline fired.
    #[error("exceeded its deadline of {} ms and was stopped", .0.as_millis())]
    Deadline(Duration),
    /// The instance tried to grow its memories past the limit (all its
    /// linear memories together).
    #[error(
        "exceeded its memory limit of {} (it asked for {}) and was stopped",
        mebibytes(*limit),
        mebibytes(*requested)
    )]
    Memory {
        /// The limit in bytes.
        limit: usize,
        /// The total size asked for in bytes.
        requested: usize,
    },
    /// The instance tried to grow its tables past the limit (all its tables
    /// together).
    #[error("exceeded its table limit of {limit} elements (it asked for {requested}) and was stopped")]
    Table {
        /// The limit in elements.
        limit: usize,
        /// The total number of elements asked for.
        requested: usize,
    },
    /// The guest called `wasi:cli/exit` with this status (WASI 0.2 carries
    /// only success, 0, or failure, 1).
    #[error(
        "called exit (with {}) instead of answering, and was stopped",
        if *.0 == 0 { "success" } else { "a failure status" }
    )]
    Exit(i32),
    /// The instance asked for more instances, memories or tables than a
    /// store may have.
    #[error("asked for more than the sandbox allows ({0}) and was stopped")]
    Resources(String),
    /// The fuel budget ran out.
    #[error("ran out of its fuel budget of {0} units and was stopped")]
    Fuel(u64),
    /// The call stack overflowed (runaway recursion).
    #[error("overflowed its call stack (runaway recursion?) and was stopped")]
    StackOverflow,
    /// The guest panicked (`unreachable`), with its panic message when it
    /// logged one.
    #[error("{}", match .0 { Some(message) => format!("panicked: {message}"), None => "panicked (wasm trap: unreachable)".to_owned() })]
    Panic(Option<String>),
    /// Any other trap, or a failure to instantiate.
    #[error("trapped: {0}")]
    Trap(String),
    /// The component answered with something malformed.
    #[error("gave a malformed answer: {0}")]
    BadAnswer(String),
    /// The plugin faulted this many times in a row and is no longer called.
    #[error("is disabled after {0} faults in a row; its remaining checks were not run")]
    Disabled(u32),
}

impl Fault {
    /// A short name for reports and results files: `deadline`, `memory`, ...
    pub fn kind(&self) -> ErrorKind {
        match self {
            Fault::Deadline(_) => ErrorKind::Deadline,
            Fault::Memory { .. } => ErrorKind::Memory,
            Fault::Table { .. } => ErrorKind::Table,
            Fault::Exit(_) => ErrorKind::Exit,
            Fault::Resources(_) => ErrorKind::Resources,
            Fault::Fuel(_) => ErrorKind::Fuel,
            Fault::StackOverflow => ErrorKind::StackOverflow,
            Fault::Panic(_) => ErrorKind::Panic,
            Fault::Trap(_) => ErrorKind::Trap,
            Fault::BadAnswer(_) => ErrorKind::BadAnswer,
            Fault::Disabled(_) => ErrorKind::Disabled,
        }
    }
}

fn mebibytes(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) { format!("{} MiB", bytes >> 20) } else { format!("{bytes} bytes") }
}

/// The registry could not be built.
#[derive(Debug, Error)]
pub enum RegistryError {
    /// A plugin failed to load.
    #[error(transparent)]
    Load(ComponentLoadError),
    /// Two plugins claim one key.
    #[error(
        "two plugins claim the key `{key}`: {first} and {second}\n\nConsider choosing one in assay.toml: [keys] {key} = \"{first_label}\" (or \"{second_label}\")"
    )]
    KeyConflict {
        /// The key.
        key: String,
        /// The plugin loaded first.
        first: String,
        /// Its label, for `[keys]`.
        first_label: String,
        /// The plugin loaded second.
        second: String,
        /// Its label.
        second_label: String,
    },
    /// Two plugins under one label (`[plugins.NAME]`, a file's stem, a
    /// built-in's name).
    #[error(
        "two plugins are labelled `{label}`: {first} and {second}\n\nConsider renaming one of them (its file, or its [plugins.NAME] in assay.toml): [keys] and pins name a plugin by its label"
    )]
    DuplicateLabel {
        /// The label.
        label: String,
        /// Where the first plugin comes from.
        first: String,
        /// Where the second comes from.
        second: String,
    },
    /// A `[keys]` entry names no loaded plugin providing that key.
    #[error(
        "[keys] {key} = \"{plugin}\" in assay.toml: no loaded plugin named `{plugin}` provides `{key}`\n\nConsider `assay plugins` to see which plugin provides which key"
    )]
    BadPreference {
        /// The key.
        key: String,
        /// The plugin it names.
        plugin: String,
    },
}

/// `assay.toml` could not be read.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("invalid configuration `{}`: {message}", file.display())]
pub struct ConfigError {
    /// The file.
    pub file: std::path::PathBuf,
    /// What is wrong, with the line when known.
    pub message: String,
}

/// Why a case, a request or a check ended in an error, as results name it
/// (serialized kebab-case: `bad-file`, `interaction-timeout`, `deadline`,
/// …). One enum for every stage, so that a report can group by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The case's file cannot be read or planned.
    BadFile,
    /// A scenario names no agent and the run gives none.
    NoAgent,
    /// The case's task stopped before deciding it: a bug in assay.
    Internal,
    /// The run was cancelled before it got to the case.
    NotRun,
    /// The run was stopped while the case ran (cancelled by its client, or
    /// past the run's time limit).
    Stopped,
    /// A sample did not complete all its turns.
    Incomplete,
    /// A turn's `timeout_in_seconds` fired.
    InteractionTimeout,
    /// The case's (per-sample) `timeout_in_seconds` fired.
    CaseTimeout,
    /// The agent's server could not be reached.
    Unreachable,
    /// TLS failed.
    Tls,
    /// The server has no such agent (HTTP 404).
    NotFound,
    /// The server answered with another error status.
    HttpStatus,
    /// A line of the answer is not what the protocol says.
    Malformed,
    /// The answer stopped in the middle of a line.
    Truncated,
    /// The server went silent past the idle timeout.
    Stalled,
    /// The answer is over the size cap.
    TooLarge,
    /// The request could not be built.
    BadRequest,
    /// No in-process agent has that name.
    UnknownAgent,
    /// An agent component, or a plugin compiled when its first check
    /// runs, could not be loaded.
    Load,
    /// The agent answered with an error of its own.
    Refused,
    /// The connection is not one assay speaks.
    Unsupported,
    /// A `command` connection's program could not be started.
    Spawn,
    /// A `command` connection's process exited (or closed its stdout)
    /// before answering.
    Crashed,
    /// A component ran past its deadline.
    Deadline,
    /// A component asked for more memory than its limit.
    Memory,
    /// A component asked for more table elements than its limit.
    Table,
    /// A component called `exit`.
    Exit,
    /// A component asked for more instances, memories or tables than a
    /// store may have.
    Resources,
    /// A component ran out of fuel.
    Fuel,
    /// A component overflowed its stack.
    StackOverflow,
    /// A component panicked.
    Panic,
    /// A component trapped.
    Trap,
    /// A component's answer was malformed.
    BadAnswer,
    /// A plugin is disabled after faulting repeatedly.
    Disabled,
    /// A plugin said it cannot evaluate the check.
    Rejected,
    /// No loaded plugin provides the check's key.
    UnknownKey,
    /// A connection's JSONPath query selects nothing in the response.
    MissingPath,
    /// A replay has no recorded answer for a case, sample, connection or
    /// interaction.
    NotRecorded,
    /// The case's prerequisite (a suite's setup of its cluster state)
    /// failed, so no request was sent.
    Setup,
}

impl ErrorKind {
    /// The name results use, e.g. `interaction-timeout`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::BadFile => "bad-file",
            ErrorKind::NoAgent => "no-agent",
            ErrorKind::Internal => "internal",
            ErrorKind::NotRun => "not-run",
            ErrorKind::Stopped => "stopped",
            ErrorKind::Incomplete => "incomplete",
            ErrorKind::InteractionTimeout => "interaction-timeout",
            ErrorKind::CaseTimeout => "case-timeout",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::Tls => "tls",
            ErrorKind::NotFound => "not-found",
            ErrorKind::HttpStatus => "http-status",
            ErrorKind::Malformed => "malformed",
            ErrorKind::Truncated => "truncated",
            ErrorKind::Stalled => "stalled",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::BadRequest => "bad-request",
            ErrorKind::UnknownAgent => "unknown-agent",
            ErrorKind::Load => "load",
            ErrorKind::Refused => "refused",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Spawn => "spawn",
            ErrorKind::Crashed => "crashed",
            ErrorKind::Deadline => "deadline",
            ErrorKind::Memory => "memory",
            ErrorKind::Table => "table",
            ErrorKind::Exit => "exit",
            ErrorKind::Resources => "resources",
            ErrorKind::Fuel => "fuel",
            ErrorKind::StackOverflow => "stack-overflow",
            ErrorKind::Panic => "panic",
            ErrorKind::Trap => "trap",
            ErrorKind::BadAnswer => "bad-answer",
            ErrorKind::Disabled => "disabled",
            ErrorKind::Rejected => "rejected",
            ErrorKind::UnknownKey => "unknown-key",
            ErrorKind::MissingPath => "missing-path",
            ErrorKind::NotRecorded => "not-recorded",
            ErrorKind::Setup => "setup",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A results directory cannot be replayed (see `crate::job::Replay`):
/// its `results.jsonl` is missing or unreadable, or a line of it is not a
/// case's result.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// `results.jsonl` cannot be read.
    #[error(
        "failed to replay `{}`: {cause}\n\nConsider the results directory of an earlier `assay run` (it holds results.jsonl)",
        path.display()
    )]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// A line is not a case's result.
    #[error(
        "failed to replay `{}`: line {line} is not a case's result: {cause}\n\nConsider the results.jsonl an `assay run` wrote, as it wrote it",
        path.display()
    )]
    Line {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based.
        line: usize,
        /// What is wrong with it.
        cause: String,
    },
    /// Two lines record one case.
    #[error("failed to replay `{}`: line {line} records case `{id}` again (first on line {first})", path.display())]
    Duplicate {
        /// The file.
        path: std::path::PathBuf,
        /// The case's id.
        id: String,
        /// The line that records it first, 1-based.
        first: usize,
        /// The line that records it again, 1-based.
        line: usize,
    },
}

/// A results directory (`results/<stamp>/`) could not be read back (see
/// `crate::results::read_results_dir`).
#[derive(Debug, Error)]
pub enum ReadResultsError {
    /// The directory holds no `results.jsonl`.
    #[error(
        "failed to read the results in `{}`: it is not the results directory of a run (it holds no results.jsonl){}",
        dir.display(),
        suggest_runs(runs)
    )]
    NotAResultsDir {
        /// The directory.
        dir: std::path::PathBuf,
        /// The results directories found in it, newest first (at most a few).
        runs: Vec<std::path::PathBuf>,
    },
    /// A file cannot be read.
    #[error("failed to read `{}`: {cause}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// A line of `results.jsonl` is not a case's result.
    #[error(
        "failed to read `{}`: line {line} is not a case's result: {cause}\n\nConsider the results.jsonl an `assay run` wrote, as it wrote it",
        path.display()
    )]
    Line {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based.
        line: usize,
        /// What is wrong with it.
        cause: String,
    },
    /// Two lines hold one case.
    #[error("failed to read `{}`: line {line} holds case `{id}` again (first on line {first})", path.display())]
    Duplicate {
        /// The file.
        path: std::path::PathBuf,
        /// The case's id.
        id: String,
        /// The first line holding it, 1-based.
        first: usize,
        /// The line holding it again, 1-based.
        line: usize,
    },
    /// `summary.json` is not a run's summary.
    #[error(
        "failed to read `{}`: it is not a run's summary: {cause}\n\nConsider the summary.json an `assay run` wrote, or removing it (the cases are read from results.jsonl)",
        path.display()
    )]
    Summary {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        cause: String,
    },
}

/// "\n\nConsider one of its runs: `results/…`, …", or a pointer to where
/// `assay run` writes them.
fn suggest_runs(runs: &[std::path::PathBuf]) -> String {
    match runs {
        [] => "\n\nConsider a folder `assay run` wrote: results/<timestamp> (or its --results DIR)".to_owned(),
        runs => {
            let runs: Vec<String> = runs.iter().map(|run| format!("`{}`", run.display())).collect();
            format!("\n\nConsider one of the runs in it (newest first): {}", runs.join(", "))
        }
    }
}

/// The HTML report of a results directory could not be written (see
/// `crate::results::render_report`).
#[derive(Debug, Error)]
pub enum HtmlReportError {
    /// The results directory cannot be read back.
    #[error(transparent)]
    Results(#[from] ReadResultsError),
    /// A file of the results directory is not what a run writes.
    #[error(
        "failed to write the HTML report: `{}`{} is not what assay writes: {cause}\n\nConsider the results directory as the run wrote it",
        path.display(), line.map(|l| format!(" line {l}")).unwrap_or_default()
    )]
    Parse {
        /// The file.
        path: std::path::PathBuf,
        /// The 1-based line of `results.jsonl`, if the error is on one.
        line: Option<usize>,
        /// What is wrong with it.
        cause: String,
    },
    /// The report cannot be written.
    #[error("failed to write the HTML report `{}`: {cause}", path.display())]
    Write {
        /// The report's file.
        path: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
}

/// A project could not be opened, or what a run needs from it could not be
/// made (see [`crate::project::Project`]).
#[derive(Debug, Error)]
pub enum ProjectError {
    /// `assay.toml` could not be read or parsed.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A setting of `assay.toml` has a value that cannot be used.
    #[error("{setting} in `{}`: {message}", file.display())]
    Setting {
        /// The configuration file.
        file: std::path::PathBuf,
        /// The setting, e.g. `[judge] timeout_secs`.
        setting: String,
        /// What is wrong with it.
        message: String,
    },
    /// A name allowed for case files is no environment variable's name.
    #[error(
        "{named_in} names {name:?}, which is not an environment variable name\n\nConsider the variable's exact name, e.g. OPENAI_API_KEY"
    )]
    NotAVariableName {
        /// Where it is named: `[cases] allow_env in assay.toml` or `--allow-env`.
        named_in: &'static str,
        /// The name.
        name: String,
    },
    /// A plugin file could not be read.
    #[error("{}failed to read plugin `{}`: {cause}", in_plugins(configured_as), path.display())]
    ReadPlugin {
        /// The file.
        path: std::path::PathBuf,
        /// Its `[plugins.NAME]`, when configured there.
        configured_as: Option<String>,
        /// What failed underneath, in the words of the library or tool that failed.
        cause: String,
    },
    /// A plugin could not be loaded.
    #[error("{}{error}", in_plugins(configured_as))]
    LoadPlugin {
        /// Its `[plugins.NAME]`, when configured there.
        configured_as: Option<String>,
        /// Why: said in full above, so not a `source` (a report of the
        /// error's chain would say it twice).
        error: ComponentLoadError,
    },
    /// A community plugin (`oci`, `url`) could not be fetched or verified.
    #[error("{}{error}", in_plugins(configured_as))]
    FetchPlugin {
        /// Its `[plugins.NAME]`, when configured there.
        configured_as: Option<String>,
        /// Why the plugin could not be fetched.
        error: FetchError,
    },
    /// The plugins could not make a registry (key conflicts, labels,
    /// `[keys]`).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// An agent component could not be added or loaded, or the http client
    /// made.
    #[error("{0}")]
    Agent(String),
    /// An agent was asked for that nobody knows.
    #[error(
        "unknown agent `{name}`; the known ones are {}\n\nConsider passing a component file (`path/to/agent.wasm`) or --agent {name}=FILE",
        known.join(", ")
    )]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The names known.
        known: Vec<String>,
    },
    /// The paths of a run could not be searched.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// A path `assay serve` was asked to run that is not under its root,
    /// does not exist, or holds no case file.
    #[error("read `paths[{index}]` (`{path}`): {message}")]
    ServedPath {
        /// Its place in the request's `paths`.
        index: usize,
        /// As the request wrote it.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The served root could not be opened to read cases beneath it.
    #[error("open the served root `{}`: {message}", root.display())]
    ServedRoot {
        /// The root.
        root: std::path::PathBuf,
        /// Why it could not be opened.
        message: String,
    },
    /// `assay run` was given no path, and there is no project to run.
    #[error(
        "no path to run: name the case files or folders (`assay run cases/`), or run from a project (a folder with an assay.toml, whose `[cases] paths` says what `assay run` runs)"
    )]
    NoPaths,
    /// The paths of a run name no test case file.
    #[error("no test case files (*.hocon) or suite files (*.suite.toml) found")]
    NoCaseFiles,
    /// No test case file is selected by the filter.
    #[error("no test case matches --filter `{filter}`")]
    NoCaseMatches {
        /// The filter.
        filter: String,
    },
    /// The paths name no scenario file.
    #[error(
        "no scenario files found (YAML, HOCON or JSON files with `scenario_id`, `problem`, `expectations`)\n\nConsider `assay validate` for validation files"
    )]
    NoScenarioFiles,
    /// The paths name no validation file.
    #[error(
        "no validation files found (YAML, HOCON or JSON files with `mock_responses`)\n\nConsider `assay eval` for scenario files"
    )]
    NoValidationFiles,
}

impl ProjectError {
    /// Whether the user asked for something that cannot be (a bad setting,
    /// flag or path: exit code 2), rather than something failing (a plugin
    /// that does not load: exit code 1).
    pub fn is_usage(&self) -> bool {
        match self {
            ProjectError::FetchPlugin { error, .. } => error.is_usage(),
            ProjectError::ReadPlugin { .. } | ProjectError::LoadPlugin { .. } | ProjectError::Registry(_) => false,
            _ => true,
        }
    }
}

fn in_plugins(configured_as: &Option<String>) -> String {
    configured_as.as_ref().map(|label| format!("in [plugins.{label}] of assay.toml: ")).unwrap_or_default()
}

/// One request to an agent failed. The run records it as an error verdict
/// on that interaction and goes on.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("agent `{agent}` at {endpoint}: {kind}")]
pub struct AgentError {
    /// The agent's name.
    pub agent: String,
    /// Where it was reached: a URL, or `direct (COMPONENT)`.
    pub endpoint: String,
    /// What went wrong.
    pub kind: AgentErrorKind,
}

/// Why a request to an agent failed.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum AgentErrorKind {
    /// Nothing answered at the address.
    #[error(
        "cannot connect: {0}\n\nConsider starting the server (`assay agent serve --port PORT` serves the demo agents) or passing --agent-url"
    )]
    Unreachable(String),
    /// The TLS handshake failed.
    #[error(
        "TLS handshake failed: {0}\n\nConsider --agent-ca FILE if the server uses a private or self-signed certificate"
    )]
    Tls(String),
    /// The server does not know the agent (HTTP 404).
    #[error("the server has no such agent (HTTP 404){}", body_suffix(.0))]
    NotFound(String),
    /// Any other non-success status.
    #[error("the server answered HTTP {status}{}", body_suffix(body))]
    Status {
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// A line of the stream is not `{"response": ChatMessage}`.
    #[error("line {line} of the response stream is malformed: {cause}")]
    Malformed {
        /// 1-based line number.
        line: usize,
        /// The parse error.
        cause: String,
    },
    /// The stream broke off: the connection dropped or the last line was
    /// cut short.
    #[error("the response stream was cut off: {0}")]
    Truncated(String),
    /// No bytes arrived for too long.
    #[error("the agent stopped sending: nothing arrived for {} s", .0.as_secs_f64())]
    Stalled(std::time::Duration),
    /// The response passed the size cap.
    #[error("the response exceeded the cap of {} MiB and was abandoned", .0 >> 20)]
    TooLarge(usize),
    /// The request could not be built (e.g. a metadata value that is not a
    /// valid HTTP header).
    #[error("invalid request: {0}")]
    BadRequest(String),
    /// No agent component of that name is configured for `direct`.
    #[error(
        "no agent component of this name; the known ones are {0}\n\nConsider adding it to assay.toml under [agents], or --agent NAME=FILE.wasm"
    )]
    UnknownAgent(String),
    /// The agent component could not be loaded.
    #[error("{0}")]
    Load(String),
    /// The agent component faulted.
    #[error("the agent component {0}")]
    Fault(Fault),
    /// The agent answered with an error of its own.
    #[error("the agent refused the request: {0}")]
    Refused(String),
    /// The connection type is not supported.
    #[error("{0}")]
    Unsupported(String),
    /// A `command` connection's process failed the request. It is gone:
    /// the next request starts a fresh one.
    #[error("{}", process_message(fault, stderr))]
    Process {
        /// What went wrong.
        fault: ProcessFault,
        /// The end of the process's stderr (at most 2 KiB), or empty.
        stderr: String,
    },
    /// Nothing answered at a named connection's URL.
    #[error(
        "cannot connect: {0}\n\nConsider starting the server, or correcting `url` in the connection's [connections.NAME] of assay.toml (`assay agent serve` serves the demo agents; `--protocol openai` makes it OpenAI-compatible)"
    )]
    ConnectionUnreachable(String),
    /// The TLS handshake with a named connection's server failed.
    #[error(
        "TLS handshake failed: {0}\n\nConsider `ca = \"FILE.pem\"` in the connection's [connections.NAME] of assay.toml if the server uses a private or self-signed certificate"
    )]
    ConnectionTls(String),
    /// The response (a body, or an event of a stream) is not what the
    /// connection reads.
    #[error("the response is malformed: {0}")]
    MalformedBody(String),
    /// A connection's JSONPath query selects nothing in the response.
    #[error(
        "the response has nothing at `{setting} = \"{path}\"`: {found}\n\nConsider correcting `{setting}` in the connection's [connections.NAME] of assay.toml"
    )]
    MissingPath {
        /// The setting: `text`, `structure`, `sly_data`, `chat_context`.
        setting: &'static str,
        /// The query as written.
        path: String,
        /// What the response holds instead (its top-level keys).
        found: String,
    },
    /// The server turned the credentials away (HTTP 401 or 403).
    #[error("the server refused the credentials (HTTP {status}){}\n\n{hint}", body_suffix(body))]
    Unauthorized {
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
        /// What to check, naming the key's variable.
        hint: String,
    },
    /// An OpenAI-compatible server has no chat completions for the model at
    /// that URL (HTTP 404).
    #[error(
        "the server has no chat completions for model `{model}` at this URL (HTTP 404){}\n\nConsider a `url` that ends where the API starts (e.g. http://localhost:11434/v1) and a model the server has",
        body_suffix(body)
    )]
    NoModel {
        /// The model asked for.
        model: String,
        /// The start of the body.
        body: String,
    },
    /// A busy server (429, 5xx) was asked again until the retries were
    /// spent: the last answer.
    #[error("{last} (gave up after {attempts} attempts)")]
    Retried {
        /// How many requests were sent.
        attempts: u32,
        /// What the last one got.
        last: Box<AgentErrorKind>,
    },
}

/// How a `command` connection's process failed a request.
#[derive(Clone, Debug, PartialEq)]
pub enum ProcessFault {
    /// The program could not be started: why.
    Start(String),
    /// The process ended or closed its stdout before answering: how, e.g.
    /// `exited with status 3`.
    Exited(String),
    /// Its answer line is not a JSON answer: why.
    Malformed(String),
    /// Its answer line passed the cap, in bytes.
    TooLarge(usize),
    /// Nothing arrived from it for this long.
    Silent(std::time::Duration),
}

impl ProcessFault {
    /// A short name for reports and results files.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ProcessFault::Start(_) => ErrorKind::Spawn,
            ProcessFault::Exited(_) => ErrorKind::Crashed,
            ProcessFault::Malformed(_) => ErrorKind::Malformed,
            ProcessFault::TooLarge(_) => ErrorKind::TooLarge,
            ProcessFault::Silent(_) => ErrorKind::Stalled,
        }
    }

    /// What happened, as a fragment.
    fn what(&self) -> String {
        match self {
            ProcessFault::Start(cause) => format!("cannot start the program: {cause}"),
            ProcessFault::Exited(how) => format!("the process {how} before answering"),
            ProcessFault::Malformed(cause) => {
                format!("the process answered with a line that is no JSON answer: {cause}")
            }
            ProcessFault::TooLarge(cap) => {
                format!("the process's answer line exceeded the cap of {} MiB and was abandoned", cap >> 20)
            }
            ProcessFault::Silent(idle) => {
                format!("the process stopped answering: nothing arrived for {} s", idle.as_secs_f64())
            }
        }
    }

    /// The fix to suggest.
    fn hint(&self) -> &'static str {
        match self {
            ProcessFault::Start(_) => {
                "Consider the program's name or path in `command`: a bare name is looked up in PATH, a relative path starts from the connection's `dir` (by default the folder of assay.toml)"
            }
            ProcessFault::Exited(_) => {
                "Consider running the command by hand and typing a request line such as {\"agent\": \"a\", \"text\": \"hi\"}: it must answer each line with one JSON line and keep running"
            }
            ProcessFault::Malformed(_) => {
                "Consider writing one JSON object per request to stdout, e.g. {\"text\": \"...\"}, and any logs to stderr"
            }
            ProcessFault::TooLarge(_) => "Consider raising `max_response_mb` of the connection",
            ProcessFault::Silent(_) => {
                "Consider flushing stdout after each answer (in Python, print(..., flush=True)), or raising `idle_timeout_secs` of the connection"
            }
        }
    }
}

/// A process fault, the end of its stderr, and the fix to suggest.
fn process_message(fault: &ProcessFault, stderr: &str) -> String {
    let stderr = match fault {
        // A program that did not start wrote nothing.
        ProcessFault::Start(_) => String::new(),
        _ if stderr.trim().is_empty() => "; its stderr is empty".to_owned(),
        _ => format!("; its stderr ends with:\n{}", stderr.trim_end()),
    };
    format!("{}{stderr}\n\n{}", fault.what(), fault.hint())
}

impl AgentErrorKind {
    /// A short name for reports and results files.
    pub fn kind(&self) -> ErrorKind {
        match self {
            AgentErrorKind::Unreachable(_) => ErrorKind::Unreachable,
            AgentErrorKind::Tls(_) => ErrorKind::Tls,
            AgentErrorKind::NotFound(_) => ErrorKind::NotFound,
            AgentErrorKind::Status { .. } => ErrorKind::HttpStatus,
            AgentErrorKind::Malformed { .. } => ErrorKind::Malformed,
            AgentErrorKind::Truncated(_) => ErrorKind::Truncated,
            AgentErrorKind::Stalled(_) => ErrorKind::Stalled,
            AgentErrorKind::TooLarge(_) => ErrorKind::TooLarge,
            AgentErrorKind::BadRequest(_) => ErrorKind::BadRequest,
            AgentErrorKind::UnknownAgent(_) => ErrorKind::UnknownAgent,
            AgentErrorKind::Load(_) => ErrorKind::Load,
            AgentErrorKind::Fault(fault) => fault.kind(),
            AgentErrorKind::Refused(_) => ErrorKind::Refused,
            AgentErrorKind::Unsupported(_) => ErrorKind::Unsupported,
            AgentErrorKind::Process { fault, .. } => fault.kind(),
            AgentErrorKind::ConnectionUnreachable(_) => ErrorKind::Unreachable,
            AgentErrorKind::ConnectionTls(_) => ErrorKind::Tls,
            AgentErrorKind::MalformedBody(_) => ErrorKind::Malformed,
            AgentErrorKind::MissingPath { .. } => ErrorKind::MissingPath,
            AgentErrorKind::Unauthorized { .. } => ErrorKind::HttpStatus,
            AgentErrorKind::NoModel { .. } => ErrorKind::NotFound,
            AgentErrorKind::Retried { last, .. } => last.kind(),
        }
    }
}

fn body_suffix(body: &str) -> String {
    if body.trim().is_empty() { String::new() } else { format!(": {}", body.trim()) }
}

/// A test case file could not be read or planned.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("`{}`: {kind}", file.display())]
pub struct CaseError {
    /// The file.
    pub file: std::path::PathBuf,
    /// What is wrong with it.
    pub kind: Box<CaseErrorKind>,
}

impl CaseError {
    /// An error in `file`.
    pub fn new(file: impl Into<std::path::PathBuf>, kind: CaseErrorKind) -> CaseError {
        CaseError { file: file.into(), kind: Box::new(kind) }
    }
}

/// What is wrong with a test case file. Paths name keys the way the file
/// nests them, e.g. `interactions[0].response.text.keywords`.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum CaseErrorKind {
    /// A scenario names no agent, and the run gives none (`--to`).
    #[error(
        "scenario `{scenario}` names no agent\n\nConsider `agent: NAME` in the file, `--to NAME`, or a default for \
         every scenario in assay.toml: [scenarios] agent = \"NAME\""
    )]
    NoAgent {
        /// The scenario's id.
        scenario: String,
    },
    /// The file cannot be read.
    #[error("cannot read it: {0}")]
    Io(String),
    /// HOCON syntax, with the line and column when known.
    #[error("{}", syntax(line, message))]
    Syntax {
        /// (line, column), 1-based.
        line: Option<(usize, usize)>,
        /// The parser's message.
        message: String,
    },
    /// YAML syntax, with the line and column when known.
    #[error("YAML syntax error{}: {message}", line.map(|(l, c)| format!(" at {l}:{c}")).unwrap_or_default())]
    YamlSyntax {
        /// (line, column), 1-based.
        line: Option<(usize, usize)>,
        /// The parser's message.
        message: String,
    },
    /// A `${VAR}` with no such environment variable.
    #[error(
        "the environment variable in ${{{variable}}} at {line}:{col} is not set\n\nConsider exporting {variable}, or writing ${{?{variable}}} to leave the value out when it is unset"
    )]
    UnsetVariable {
        /// The variable's name.
        variable: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
    },
    /// A `${VAR}` naming a variable case files may not read.
    #[error(
        "the environment variable in ${{{variable}}} at {line}:{col} is not allowed in case files{}\n\nConsider allowing it in assay.toml:\n[cases]\nallow_env = [\"{variable}\"]\nor passing --allow-env {variable}",
        not_allowed_reason(*protected, prefix)
    )]
    VariableNotAllowed {
        /// The variable's name.
        variable: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// Whether it holds a configured API key.
        protected: bool,
        /// The prefix of the variables case files may read unasked (empty
        /// when none may be).
        prefix: &'static str,
    },
    /// The file is larger than the reader accepts.
    #[error(
        "the file is {size} bytes, over the cap of {} for {what}\n\nConsider splitting it into several files",
        human_bytes(*cap)
    )]
    TooLarge {
        /// Its size in bytes.
        size: u64,
        /// The cap in bytes.
        cap: u64,
        /// What the cap is for, e.g. `case files`.
        what: &'static str,
    },
    /// Something the reader refuses to do for a file (an `include`, a
    /// substitution of the file's own values, nesting too deep), with the
    /// line and column when known.
    #[error("{}", refused(line, message))]
    Refused {
        /// (line, column), 1-based.
        line: Option<(usize, usize)>,
        /// What and why, with a suggestion.
        message: String,
    },
    /// Something only a trusted file may do (run a program, read a secret
    /// or a file outside its folder), in a file that is data
    /// (`crate::case::Trust`).
    #[error("it is data, not a trusted file, so it may not do what it asks: it {what}\n\nConsider: {how}")]
    Untrusted {
        /// What it asked for (`runs \`./setup.sh\``, `reads $AWS_SECRET`).
        what: String,
        /// How to allow it.
        how: String,
    },
    /// A key the format does not have.
    #[error("unknown {what} `{key}` at `{path}`{}; the known ones are {known}", did_you_mean(suggestion))]
    UnknownKey {
        /// Where.
        path: String,
        /// The key as written.
        key: String,
        /// `key`, `connection`, `response part`.
        what: &'static str,
        /// The closest known one.
        suggestion: Option<String>,
        /// Every known one, comma-separated.
        known: String,
    },
    /// A test name no plugin provides.
    #[error("unknown matcher key `{key}` at `{path}`{}\n\n{}", did_you_mean(suggestion), add_plugin_hint(first_party))]
    UnknownMatcher {
        /// Where.
        path: String,
        /// The key as written.
        key: String,
        /// The closest known key.
        suggestion: Option<String>,
        /// The `[plugins.NAME]` entry of the first-party plugin that
        /// provides the key, when one does.
        first_party: Option<String>,
    },
    /// A value of the wrong type.
    #[error("`{path}` must be {expected}, but it is {found}")]
    WrongType {
        /// Where.
        path: String,
        /// What it must be.
        expected: String,
        /// What it is.
        found: String,
    },
    /// A value of the right type that is still wrong.
    #[error("invalid `{path}`: {message}")]
    Invalid {
        /// Where.
        path: String,
        /// What is wrong, in words a person can act on.
        message: String,
    },
    /// A required key is absent.
    #[error("missing `{path}`: {what}")]
    Missing {
        /// Which key.
        path: String,
        /// What it holds.
        what: &'static str,
    },
    /// A suite file is not valid TOML, or not a suite (the parser's message
    /// names the line and column).
    #[error("TOML: {0}")]
    Toml(String),
    /// A line of a spec file (JSON lines) cannot be a case.
    #[error("line {line}: {message}")]
    SpecLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong, with a suggestion.
        message: String,
    },
}

impl CaseErrorKind {
    /// A [`CaseErrorKind::WrongType`] describing the value found.
    pub(crate) fn wrong_type(path: &str, expected: &str, found: &serde_json::Value) -> CaseErrorKind {
        CaseErrorKind::WrongType { path: path.to_owned(), expected: expected.to_owned(), found: describe_json(found) }
    }
}

fn not_allowed_reason(protected: bool, prefix: &str) -> String {
    if protected {
        " (it holds a configured API key, so only allowing it by name makes it visible)".into()
    } else if prefix.is_empty() {
        " (only those the server allows by name are: a server's clients are not its user)".into()
    } else {
        format!(" (only {prefix}* variables and those allowed by name are)")
    }
}

fn human_bytes(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

fn refused(line: &Option<(usize, usize)>, message: &str) -> String {
    match line {
        Some((line, col)) => format!("refused at {line}:{col}: {message}"),
        None => format!("refused: {message}"),
    }
}

fn syntax(line: &Option<(usize, usize)>, message: &str) -> String {
    match line {
        Some((line, col)) => format!("HOCON syntax error at {line}:{col}: {message}"),
        None => format!("HOCON error: {message}"),
    }
}

/// How to get the key: the first-party plugin that provides it, or where to
/// look.
fn add_plugin_hint(first_party: &Option<String>) -> String {
    match first_party {
        Some(entry) => format!(
            "Consider adding the first-party plugin that provides it to assay.toml:\n{entry}\n(the path is relative to an assay checkout)"
        ),
        None => "Consider `assay plugins` to list the keys, or adding the plugin that provides it to assay.toml".into(),
    }
}

/// How to load the plugin that provides `key`, when no loaded one does.
pub(crate) fn load_plugin_hint(key: &str) -> String {
    format!(
        "Consider loading the plugin that provides `{key}`: `--plugin PATH.wasm`, or in assay.toml `[plugins.NAME]` \
         with `path = \"PATH.wasm\"` (`assay plugins` lists the keys loaded now)"
    )
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
}

/// A JSON value's type and a short rendering, for messages: `the number 5`,
/// `the string "abc"`.
pub(crate) fn describe_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    let text = value.to_string();
    let mut short: String = text.chars().take(40).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => format!("the boolean {short}"),
        Value::Number(_) => format!("the number {short}"),
        Value::String(_) => format!("the string {short}"),
        Value::Array(_) => format!("the list {short}"),
        Value::Object(_) => format!("the dictionary {short}"),
    }
}

/// Test case files could not be found.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum DiscoverError {
    /// A path that does not exist.
    #[error("`{}` does not exist", path.display())]
    NotFound {
        /// The path.
        path: std::path::PathBuf,
    },
    /// A glob that matched nothing.
    #[error("the pattern `{pattern}` matches no files")]
    NoMatch {
        /// The pattern.
        pattern: String,
    },
    /// A malformed glob.
    #[error("the pattern `{pattern}` is malformed: {error}")]
    BadGlob {
        /// The pattern.
        pattern: String,
        /// What failed, in words a person can act on.
        error: String,
    },
    /// A directory that cannot be read.
    #[error("cannot read `{}`: {error}", path.display())]
    Io {
        /// The directory.
        path: std::path::PathBuf,
        /// What failed, in words a person can act on.
        error: String,
    },
}

/// A plugin crate could not be scaffolded or built (see
/// `crate::authoring`).
#[derive(Debug, Error)]
pub enum AuthoringError {
    /// The name is not one a plugin (and its key) can have.
    #[error(
        "`{0}` cannot name a plugin: use lowercase letters, digits, `_` and `-`, starting with a letter (and not `not_`)"
    )]
    BadName(String),
    /// The scaffold's folder has files in it already.
    #[error("`{}` already exists and is not empty", .0.display())]
    NotEmpty(std::path::PathBuf),
    /// A file `assay init` would write exists.
    #[error(
        "`{}` exists already: `assay init` makes a new project and changes nothing of one\n\nConsider `assay init DIR` for a new folder",
        .0.display()
    )]
    Exists(std::path::PathBuf),
    /// A path given cannot be made absolute (an empty one, or no current
    /// directory).
    #[error("failed to make `{}` absolute: {cause}", path.display())]
    Absolute {
        /// The path as given.
        path: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// A folder of the scaffold could not be created.
    #[error("failed to create `{}`: {cause}", path.display())]
    CreateDir {
        /// The folder.
        path: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// A file (of the scaffold, or the built component) could not be
    /// written.
    #[error("failed to write `{}`: {cause}", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// The crate's `Cargo.toml` is not a plugin crate's.
    #[error("`{}`: {kind}", path.display())]
    Manifest {
        /// The manifest.
        path: std::path::PathBuf,
        /// What is wrong with it.
        kind: ManifestErrorKind,
    },
    /// No toolchain here builds `wasm32-unknown-unknown`.
    #[error(
        "no Rust toolchain here can build wasm32-unknown-unknown\n\nConsider one of:\n  rustup target add wasm32-unknown-unknown\nor, on Debian/Ubuntu without rustup's wasm target:\n  apt-get update && apt-get install -y rustc-web cargo-web rust-web-src lld-22"
    )]
    NoWasmToolchain,
    /// cargo could not be started.
    #[error("failed to run cargo: {0}")]
    Cargo(std::io::Error),
    /// cargo ran and failed.
    #[error("the wasm build of `{package}` failed (see cargo's output above)")]
    BuildFailed {
        /// The crate's package name.
        package: String,
    },
    /// The module cargo built could not be read.
    #[error("failed to read the build `{}`: {cause}", path.display())]
    ReadModule {
        /// The module.
        path: std::path::PathBuf,
        /// What failed underneath, in the words of the library or tool that failed.
        cause: String,
    },
    /// The module could not be made a component.
    #[error(
        "failed to make a component of `{}`: {cause}\n\nConsider exporting the matcher with `export_matcher!` from assay-plugin-sdk",
        path.display()
    )]
    Componentize {
        /// The module.
        path: std::path::PathBuf,
        /// Why, from wit-component.
        cause: String,
    },
    /// The component was built but does not load as a matcher plugin.
    #[error(transparent)]
    Load(ComponentLoadError),
    /// The virtual environment a Python plugin is built with has no
    /// componentize-py of the pinned version.
    #[error(
        "failed to find componentize-py {version} in `{venv}` ({found})\n\nConsider installing it there (from PyPI, with Python 3.10 or later):\n  python3 -m venv {venv} && {venv}/bin/pip install componentize-py=={version}\nor pointing COMPONENTIZE_PY_VENV at a virtual environment that has it",
        venv = venv.display()
    )]
    NoComponentizePy {
        /// The virtual environment looked in.
        venv: std::path::PathBuf,
        /// The pinned version.
        version: String,
        /// What was found instead: no Python there, or another version.
        found: String,
    },
    /// componentize-py's Python could not be started.
    #[error("failed to run componentize-py with `{}`: {cause}", python.display())]
    Componentizer {
        /// The virtual environment's Python.
        python: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// componentize-py ran and failed.
    #[error("failed to build the Python plugin `{name}` with componentize-py (see its output above)")]
    PythonBuildFailed {
        /// The plugin's name.
        name: String,
    },
    /// A Python plugin's `requirements.txt` cannot be bundled.
    #[error("`{}`: {kind}", path.display())]
    Requirements {
        /// The `requirements.txt`.
        path: std::path::PathBuf,
        /// What is wrong with it, or with what it installs.
        kind: RequirementsErrorKind,
    },
}

impl AuthoringError {
    /// Whether the user asked for something that cannot be (a bad name, a
    /// folder with files, a folder that is no plugin crate, no wasm
    /// toolchain: exit code 2), rather than something failing (the build:
    /// exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            AuthoringError::BadName(_)
                | AuthoringError::NotEmpty(_)
                | AuthoringError::Exists(_)
                | AuthoringError::Manifest { .. }
                | AuthoringError::NoWasmToolchain
                | AuthoringError::NoComponentizePy { .. }
        ) || matches!(self, AuthoringError::Requirements { kind, .. } if kind.is_usage())
    }
}

/// What is wrong with a Python plugin's `requirements.txt`, or with the
/// packages pip installs from it.
#[derive(Debug, Error)]
pub enum RequirementsErrorKind {
    /// It cannot be read.
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    /// A line the build does not pass to pip.
    #[error("line {line} `{text}` {reason}")]
    Line {
        /// Its number, from 1.
        line: usize,
        /// The line, continuations joined and comment removed.
        text: String,
        /// Why it is refused, with the fix.
        reason: String,
    },
    /// A wheel it names by path cannot be read.
    #[error("cannot read the wheel `{}`: {cause}", wheel.display())]
    ReadWheel {
        /// The wheel.
        wheel: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// pip could not be started.
    #[error("failed to run pip with `{}`: {cause}", python.display())]
    RunPip {
        /// The virtual environment's Python.
        python: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// pip ran and failed.
    #[error(
        "pip could not install it (pure-Python wheels only, for Python {python_version}):\n{output}\n\nConsider the package's name and version as its index spells them; a package published only as source (no wheel) cannot be bundled: build its wheel (`pip wheel --no-deps PACKAGE`), save it in the plugin's folder and list its path"
    )]
    PipFailed {
        /// The Python version the packages are for: the component's.
        python_version: String,
        /// The end of pip's output, indented.
        output: String,
    },
    /// Packages it installs are not pure Python, so no component can hold
    /// them.
    #[error(
        "it installs packages that are not pure Python, which a component cannot hold:\n{}\n\nConsider a pure-Python package that does the same, or the part of it the metric needs as a `.py` file of the plugin",
        .0.join("\n")
    )]
    NotPurePython(Vec<String>),
    /// A module of the plugin has the name of a package it installs, which
    /// it would hide from the metrics.
    #[error(
        "it installs the package `{package}`, which the plugin's `{package}.py` would hide from every metric\n\nConsider renaming `{package}.py`"
    )]
    HiddenPackage {
        /// The package's import name.
        package: String,
    },
    /// The packages take more room than a component should hold.
    #[error(
        "its packages take {size_mib} MiB installed, more than the {limit_mib} MiB a plugin may bundle (the largest: {largest})\n\nConsider dropping the packages the metric does not import"
    )]
    TooLarge {
        /// Their size, in MiB.
        size_mib: u64,
        /// The limit, in MiB.
        limit_mib: u64,
        /// The largest packages, with their sizes.
        largest: String,
    },
}

impl RequirementsErrorKind {
    /// Whether the file asks for what cannot be (exit code 2), rather than
    /// something failing (pip, a read: exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            RequirementsErrorKind::Line { .. }
                | RequirementsErrorKind::NotPurePython(_)
                | RequirementsErrorKind::HiddenPackage { .. }
                | RequirementsErrorKind::TooLarge { .. }
        )
    }
}

/// What is wrong with a plugin crate's `Cargo.toml`.
#[derive(Debug, Error)]
pub enum ManifestErrorKind {
    /// It cannot be read (most often: the folder is no crate).
    #[error("cannot read it: {0}\n\nConsider the folder of a plugin crate, e.g. one `assay plugin new` made")]
    Read(std::io::Error),
    /// It is not TOML.
    #[error("{0}")]
    Syntax(String),
    /// It names no package.
    #[error("it has no [package] name")]
    NoPackageName,
    /// A Python plugin's `pyproject.toml` names no project.
    #[error(
        "it has no [project] name\n\nConsider `name = \"NAME\"` under [project], as `assay plugin new --python` writes"
    )]
    NoProjectName,
    /// A Python plugin's `pyproject.toml` lists no metric file.
    #[error(
        "it lists no metric files\n\nConsider `metrics = [\"KEY.py\"]` under [tool.assay]: each file's `evaluate(output, expected)` is the key named after it"
    )]
    NoMetrics,
    /// A metric file a Python plugin lists cannot be one.
    #[error("its metric `{file}` {reason}")]
    BadMetric {
        /// The file as listed.
        file: String,
        /// Why it cannot be a metric, with the fix.
        reason: String,
    },
    /// Its `component` path leaves the plugin's folder.
    #[error("{0}")]
    ComponentOutside(String),
}

/// The plugins of a project could not be pinned in its configuration (see
/// [`crate::project::Project::lock`]).
#[derive(Debug, Error)]
pub enum LockError {
    /// The plugin files could not be listed (two under one label).
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// There is no configuration file, and no component of
    /// `.assay/plugins/` to pin in a new one.
    #[error("`{}`: there is no assay.toml to lock", path.display())]
    NoConfig {
        /// The configuration file.
        path: std::path::PathBuf,
    },
    /// The configuration file could not be read.
    #[error("failed to read `{}`: {cause}", path.display())]
    Read {
        /// The configuration file.
        path: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
    /// The configuration is not TOML, or its `plugins` is not a table.
    #[error("`{}`: {message}", path.display())]
    Invalid {
        /// The configuration file.
        path: std::path::PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A plugin file could not be read to hash it.
    #[error("failed to read plugin `{}`: {cause}", path.display())]
    ReadPlugin {
        /// The plugin file.
        path: std::path::PathBuf,
        /// What failed underneath, in the words of the library or tool that failed.
        cause: String,
    },
    /// The pinned configuration could not be written.
    #[error("failed to write `{}`: {cause}", path.display())]
    Write {
        /// The configuration file.
        path: std::path::PathBuf,
        /// The I/O error underneath, as the system reported it.
        cause: std::io::Error,
    },
}

impl LockError {
    /// Whether the user asked for something that cannot be (no
    /// configuration, an invalid one, a bad setting: exit code 2), rather
    /// than something failing (a file that cannot be read or written, two
    /// plugins under one label: exit code 1).
    pub fn is_usage(&self) -> bool {
        match self {
            LockError::Project(error) => error.is_usage(),
            LockError::NoConfig { .. } | LockError::Invalid { .. } => true,
            LockError::Read { .. } | LockError::ReadPlugin { .. } | LockError::Write { .. } => false,
        }
    }
}

/// A `--shard K/N` value that names no shard.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ShardError {
    /// Not two numbers around a `/`.
    #[error("`{text}` is not a shard: write K/N, e.g. 2/4 for the second of four")]
    NotAShard {
        /// What was given.
        text: String,
    },
    /// N is 0.
    #[error("`{text}` is not a shard: there must be at least one shard (1/1)")]
    NoShards {
        /// What was given.
        text: String,
    },
    /// K is 0 or more than N.
    #[error("`{text}` is not a shard: K counts from 1 to N (1/{total} to {total}/{total})")]
    OutOfRange {
        /// What was given.
        text: String,
        /// N.
        total: u32,
    },
}

/// Results directories that `assay merge` cannot put together (see
/// `crate::results::merge`).
#[derive(Debug, Error)]
pub enum MergeError {
    /// A directory cannot be read as a run's results.
    #[error(transparent)]
    Read(#[from] ReadResultsError),
    /// A line of a directory's `results.jsonl` is not a whole case result.
    #[error(
        "failed to merge `{}`: line {line} is not a case's result: {cause}\n\nConsider the results.jsonl an `assay run` wrote, as it wrote it",
        path.display()
    )]
    Line {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based.
        line: usize,
        /// What is wrong with it.
        cause: String,
    },
    /// A directory's run did not finish: it has no `summary.json`.
    #[error(
        "failed to merge `{}`: it holds no summary.json, so its run never finished (it was killed, or is still running)\n\nConsider running that shard again, or --allow-incomplete to merge the cases it recorded",
        dir.display()
    )]
    Incomplete {
        /// The directory.
        dir: std::path::PathBuf,
    },
    /// Two directories hold the same case, and neither is a rerun.
    #[error(
        "failed to merge: case `{id}` is in both `{}` and `{}`\n\nConsider merging each shard's directory once; a directory written by `assay run --rerun-failed` replaces the cases it reran",
        first.display(),
        second.display()
    )]
    Overlap {
        /// The case's id.
        id: String,
        /// The directory it was found in first.
        first: std::path::PathBuf,
        /// The other.
        second: std::path::PathBuf,
    },
    /// Two directories are shards of different partitions.
    #[error(
        "failed to merge: `{}` is shard {first_shard} and `{}` is shard {second_shard}: shards of different totals cut the cases differently\n\nConsider merging the shards of one run, all with the same --shard K/N total",
        first.display(),
        second.display()
    )]
    Totals {
        /// One directory.
        first: std::path::PathBuf,
        /// Its shard, as K/N.
        first_shard: String,
        /// The other.
        second: std::path::PathBuf,
        /// Its shard, as K/N.
        second_shard: String,
    },
    /// Two directories are the same shard.
    #[error(
        "failed to merge: `{}` and `{}` are both shard {shard}\n\nConsider merging each shard's directory once",
        first.display(),
        second.display()
    )]
    ShardTwice {
        /// The shard, as K/N.
        shard: String,
        /// One directory.
        first: std::path::PathBuf,
        /// The other.
        second: std::path::PathBuf,
    },
    /// Some shards of the partition are not among the directories.
    #[error(
        "failed to merge: {} of {total} missing ({})\n\nConsider adding their results directories, or --allow-missing to merge without them (summary.json then names them)",
        crate::plural::count(missing.len(), "shard"),
        missing.iter().map(|k| format!("{k}/{total}")).collect::<Vec<_>>().join(", ")
    )]
    MissingShards {
        /// The missing shards' indexes.
        missing: Vec<u32>,
        /// N.
        total: u32,
    },
    /// A rerun's directory holds a case that no other directory holds.
    #[error(
        "failed to merge: `{}` reran case `{id}`, which none of the other directories holds\n\nConsider merging the rerun with the directory it reran (its summary.json names it: `rerun_of`)",
        rerun.display()
    )]
    RerunOfNothing {
        /// The case's id.
        id: String,
        /// The rerun's directory.
        rerun: std::path::PathBuf,
    },
    /// The merged results would be written into one of the directories
    /// merged.
    #[error(
        "failed to merge into `{}`: it is one of the directories merged\n\nConsider --results with a new directory",
        dir.display()
    )]
    IntoInput {
        /// The directory.
        dir: std::path::PathBuf,
    },
    /// The merged results could not be written (the message names the
    /// file).
    #[error("failed to {0}")]
    Write(String),
    /// The HTML report of the merged results could not be written.
    #[error(transparent)]
    Report(#[from] HtmlReportError),
}

/// `assay serve` could not start (see `crate::serve`).
#[derive(Debug, Error)]
pub enum ServeError {
    /// Bound beyond loopback with no token: anyone who can reach the
    /// address could run checks and cases.
    #[error(
        "serve on {bind} without a token: an address beyond loopback needs one\n\nConsider --token-file FILE or \
         ASSAY_SERVE_TOKEN, or --bind 127.0.0.1"
    )]
    NoToken {
        /// The address asked for.
        bind: std::net::SocketAddr,
    },
    /// The token cannot be used (its value is never shown).
    #[error("read the token from {source_name}: {message}")]
    Token {
        /// Where it comes from: the file or the variable.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// The served root is not a directory that can be read.
    #[error("serve `{}` as the root: {message}\n\nConsider --root DIR with an existing directory", path.display())]
    Root {
        /// The root asked for.
        path: std::path::PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A limit is out of range.
    #[error("use {setting} = {value}: {message}")]
    Limit {
        /// The limit's flag.
        setting: &'static str,
        /// The value given.
        value: String,
        /// What is wrong, and what to use.
        message: String,
    },
    /// The address cannot be listened on.
    #[error("listen on {bind}: {message}")]
    Listen {
        /// The address asked for.
        bind: std::net::SocketAddr,
        /// The system's reason.
        message: String,
    },
    /// The project's plugins could not be loaded.
    #[error(transparent)]
    Project(#[from] ProjectError),
}

impl ServeError {
    /// Whether it is the user's request that cannot be served (exit code
    /// 2), not the machine failing.
    pub fn is_usage(&self) -> bool {
        match self {
            ServeError::NoToken { .. }
            | ServeError::Token { .. }
            | ServeError::Root { .. }
            | ServeError::Limit { .. } => true,
            ServeError::Listen { .. } => false,
            ServeError::Project(error) => error.is_usage(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_and_resource_refusals_say_what_happened() {
        assert_eq!(Fault::Exit(1).kind(), ErrorKind::Exit);
        assert_eq!(
            Fault::Exit(1).to_string(),
            "called exit (with a failure status) instead of answering, and was stopped"
        );
        assert_eq!(Fault::Exit(0).to_string(), "called exit (with success) instead of answering, and was stopped");
        assert_eq!(
            Fault::Resources("table count too high at 100".into()).to_string(),
            "asked for more than the sandbox allows (table count too high at 100) and was stopped"
        );
        assert_eq!(
            Fault::Memory { limit: 64 << 20, requested: (64 << 20) + 1 }.to_string(),
            "exceeded its memory limit of 64 MiB (it asked for 67108865 bytes) and was stopped"
        );
        assert_eq!(Fault::Panic(None).to_string(), "panicked (wasm trap: unreachable)");
    }

    #[test]
    fn a_load_error_names_the_role_and_the_source() {
        let denied = |role| ComponentLoadError {
            role,
            component: "`x.wasm`".into(),
            kind: ComponentLoadErrorKind::Denied(Denied { role, import: "wasi:http/types@0.2.0".into(), grant: None }),
        };
        assert_eq!(
            denied(ComponentRole::Agent).to_string(),
            "failed to load agent `x.wasm`: it imports `wasi:http/types@0.2.0`: agents get no HTTP access, and no grant allows it"
        );
        assert_eq!(
            denied(ComponentRole::Plugin).to_string(),
            "failed to load plugin `x.wasm`: it imports `wasi:http/types@0.2.0`: plugins get no HTTP access, and no grant allows it"
        );
    }
}

/// A community plugin could not be fetched, checked or published (see
/// `crate::distribution`).
#[derive(Debug, Error)]
pub enum FetchError {
    /// What was given names no OCI reference or URL.
    #[error(
        "`{reference}` is not a plugin reference: {message}\n\nConsider an OCI reference (`ghcr.io/acme/rouge:1.2.0`) or the https URL of a .wasm file"
    )]
    BadReference {
        /// As given.
        reference: String,
        /// What is wrong with it.
        message: String,
    },
    /// The registry or server could not be reached, or answered with an
    /// error.
    #[error("`{reference}`: {message}")]
    Network {
        /// The reference or URL asked for.
        reference: String,
        /// What went wrong.
        message: String,
    },
    /// What the reference names is not a Wasm component artifact.
    #[error(
        "`{reference}` is not a Wasm component: {message}\n\nConsider publishing the component with `assay plugin publish` (or `wkg oci push`): a config of `application/vnd.wasm.config.v0+json` and one `application/wasm` layer"
    )]
    NotAComponent {
        /// The reference.
        reference: String,
        /// What it is instead.
        message: String,
    },
    /// The component is larger than a component may be.
    #[error("`{reference}` is {size} bytes, more than the {} MiB a component may be", max >> 20)]
    TooLarge {
        /// The reference or URL.
        reference: String,
        /// Its size, as announced or as read so far.
        size: u64,
        /// The cap.
        max: u64,
    },
    /// The bytes downloaded are not the ones pinned.
    #[error(
        "`{reference}` sent a component whose sha256 is {actual}, not the pinned {expected}: refusing it\n\nConsider `assay plugin update` if its publisher changed it on purpose"
    )]
    DigestMismatch {
        /// The reference or URL.
        reference: String,
        /// The pin.
        expected: String,
        /// What arrived.
        actual: String,
    },
    /// A pinned entry lacks what fetching it by its pin needs.
    #[error("{message}\n\nConsider `assay plugin update {label}`, which pins it")]
    Unpinned {
        /// The entry.
        label: String,
        /// What it lacks.
        message: String,
    },
    /// No signature by the configured cosign key was found.
    #[error(
        "`{reference}` has no valid cosign signature by `{}`: {message}\n\nConsider asking its publisher to sign it (`cosign sign --key cosign.key {reference}`), or removing `cosign-key` if you trust it unsigned",
        key.display()
    )]
    Signature {
        /// The reference.
        reference: String,
        /// The public key file.
        key: std::path::PathBuf,
        /// What was found instead.
        message: String,
    },
    /// The cosign public key file cannot be used.
    #[error("cosign key `{}`: {message}\n\nConsider the `cosign.pub` that `cosign generate-key-pair` wrote (an ECDSA P-256 public key in PEM)", path.display())]
    CosignKey {
        /// The key file.
        path: std::path::PathBuf,
        /// What is wrong, in words a person can act on.
        message: String,
    },
    /// The plugin store could not be used.
    #[error("plugin store `{}`: {message}", dir.display())]
    Store {
        /// The store's folder.
        dir: std::path::PathBuf,
        /// What is wrong, in words a person can act on.
        message: String,
    },
}

/// `assay plugin add` or `update` could not add or move a community plugin
/// (see [`crate::project::Project::add_plugin`]).
#[derive(Debug, Error)]
pub enum CommunityError {
    /// It could not be fetched or verified.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// What was fetched is not a plugin assay can load.
    #[error("`{reference}` is not a matcher plugin assay can load: {error}")]
    Load {
        /// The reference.
        reference: String,
        /// Why the component could not be loaded.
        error: ComponentLoadError,
    },
    /// The configuration could not be read or written.
    #[error(transparent)]
    Config(#[from] LockError),
    /// It asks for capabilities that are not granted.
    #[error(
        "`{reference}` asks for {}, which {} not granted: nothing was written\n\nConsider {}, if you trust it with {}",
        missing.join(" and "),
        if missing.len() == 1 { "is" } else { "are" },
        format!("`{}`", missing.iter().map(|g| format!("--grant {g}")).collect::<Vec<_>>().join(" ")),
        if missing.len() == 1 { "it" } else { "them" }
    )]
    Ungranted {
        /// The reference.
        reference: String,
        /// The capabilities asked for and not granted.
        missing: Vec<String>,
    },
    /// A newer version asks for more than `[plugins.NAME] grants` allows.
    #[error(
        "[plugins.{label}]: `{reference}` now asks for {}, which `grants` does not allow: it was left at its pin\n\nConsider adding {} to its `grants`, if you trust it with that",
        missing.join(" and "),
        missing.iter().map(|g| format!("\"{g}\"")).collect::<Vec<_>>().join(", ")
    )]
    UpdateUngranted {
        /// The entry.
        label: String,
        /// The reference.
        reference: String,
        /// The capabilities asked for and not granted.
        missing: Vec<String>,
    },
    /// The label is taken.
    #[error("[plugins.{label}] is taken ({taken_by}): nothing was written\n\nConsider `--name OTHER` to add it under another label{}", if *same_source { format!(", or `assay plugin update {label}` to move it to what its reference names now") } else { String::new() })]
    LabelTaken {
        /// The label.
        label: String,
        /// What has it.
        taken_by: String,
        /// Whether it is the same reference (then `update` is meant).
        same_source: bool,
    },
    /// A label that cannot name a plugin.
    #[error("`{label}` cannot label a plugin: use lowercase letters, digits, `_` and `-`")]
    BadLabel {
        /// The label.
        label: String,
    },
    /// A grant name that does not exist.
    #[error("{0}")]
    BadGrant(String),
    /// `update NAME` of a plugin that is not configured, or not a community
    /// one.
    #[error("{message}")]
    NotCommunity {
        /// What is wrong.
        message: String,
    },
}

impl FetchError {
    /// Whether the user asked for something that cannot be (a reference,
    /// key or entry that is wrong: exit code 2), rather than something
    /// failing or refused on the way (exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(self, FetchError::BadReference { .. } | FetchError::Unpinned { .. } | FetchError::CosignKey { .. })
    }
}

impl CommunityError {
    /// Whether the user asked for something that cannot be (exit code 2),
    /// rather than something failing or refused (exit code 1).
    pub fn is_usage(&self) -> bool {
        match self {
            CommunityError::Fetch(error) => error.is_usage(),
            CommunityError::Config(error) => error.is_usage(),
            CommunityError::Load { .. } => false,
            CommunityError::Ungranted { .. }
            | CommunityError::UpdateUngranted { .. }
            | CommunityError::LabelTaken { .. }
            | CommunityError::BadLabel { .. }
            | CommunityError::BadGrant(_)
            | CommunityError::NotCommunity { .. } => true,
        }
    }
}

/// A `[plugins.NAME]` whose component cannot be told (see
/// `crate::config::PluginConfig::source`).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PluginSourceError {
    /// None of `path`, `oci` and `url`.
    #[error("names no component: set `path` (a .wasm file), or add one with `assay plugin add REF`")]
    NoComponent,
    /// More than one of them.
    #[error("names its component twice: keep one of `path`, `oci` and `url`")]
    Twice,
    /// A community component's pin that is no sha256.
    #[error("`sha256 = \"{0}\"` is not a sha256 (64 lowercase hex digits)")]
    BadPin(String),
    /// `cosign-key` beside no `oci`.
    #[error("`cosign-key` verifies components from OCI registries (`oci`), where cosign signatures live")]
    CosignWithoutOci,
}

/// Files could not be watched (`assay run --watch`).
#[derive(Debug, Error)]
#[error("cannot watch `{}`: {cause}", path.display())]
pub struct WatchError {
    /// What was to be watched.
    pub path: std::path::PathBuf,
    /// Why not.
    pub cause: String,
}
