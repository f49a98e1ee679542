//! Every command and flag of `assay`, as clap derives: plain, validated
//! data and nothing else.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// An assertion engine for testing AI agents, with matchers that run as
/// sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "assay", version, about, max_term_width = 100)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a project here: an assay.toml, a case against a demo agent
    /// and a CI workflow.
    Init(InitArgs),
    /// Run test cases against their agents and check every response.
    Run(RunArgs),
    /// List the loaded matcher plugins: their keys, version, source and sha256.
    Plugins(PluginsArgs),
    /// Evaluate one check from the shell.
    Check(CheckArgs),
    /// Show the checks each test case will run, without running anything.
    Plan(PlanArgs),
    /// Run every sample of test cases and group how the failed ones failed
    /// (the Assessor).
    Assess(AssessArgs),
    /// Send scenario problems to an agent and score the answers against
    /// weighted, categorized expectations.
    Eval(EvalArgs),
    /// Measure how far a judge can be trusted: judge mock responses with
    /// known right answers, report agreement and a confusion matrix.
    Validate(ValidateArgs),
    /// Compare two runs' results directories: what newly fails, passes or
    /// is flaky, what was added or removed, how scores moved; exit 1 when
    /// something regressed beyond the allowances.
    Diff(DiffArgs),
    /// Write the HTML report of a results directory (DIR/report.html): one
    /// file, no network, opens in any browser.
    Report(ReportArgs),
    /// Merge results directories (the shards of a run, reruns of its
    /// failed cases) into one: results.jsonl, summary.json, junit.xml and
    /// report.html; exit 1 when a merged case failed.
    Merge(MergeArgs),
    /// Work with agent components: serve them over neuro-san's HTTP protocol.
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Serve the project as an HTTP API on 127.0.0.1: checks, runs with
    /// their event streams, the plugins, promptfoo's webhook
    /// (GET /v1/openapi.json lists it all).
    Serve(ServeApiArgs),
    /// Write your own matcher plugin: scaffold a crate, build it into a
    /// component.
    #[command(subcommand)]
    Plugin(PluginCommand),
}

/// `assay agent ...`.
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Serve agent components over neuro-san's HTTP protocol on 127.0.0.1
    /// (list, function and streaming_chat endpoints).
    Serve(ServeArgs),
    /// List the agents `direct` connections can reach.
    List(AgentListArgs),
}

/// `assay init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project's folder [default: the current one].
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `assay plugin ...`.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Create a plugin crate (or with --python, a Python metric plugin) with
    /// a working matcher and its unit test.
    New(PluginNewArgs),
    /// Build a plugin crate into a component, load it, print its path and
    /// sha256.
    Build(PluginBuildArgs),
    /// Add a community plugin by reference (an OCI reference or an https
    /// URL): fetch it, show what it provides and asks for, and pin it in
    /// assay.toml.
    Add(PluginAddArgs),
    /// Move the pins of community plugins to what their tags (or URLs)
    /// name now: the only command besides `add` that asks a registry for a
    /// tag.
    Update(PluginUpdateArgs),
    /// Push a built component to an OCI registry, with its keys as
    /// annotations.
    Publish(PluginPublishArgs),
}

/// `assay plugin add`.
#[derive(Debug, Args)]
pub struct PluginAddArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// An OCI reference (`ghcr.io/acme/rouge:1.2.0`; plain http for
    /// registries on localhost) or the https URL of a .wasm file.
    #[arg(value_name = "REF")]
    pub reference: String,
    /// The `[plugins.NAME]` to write [default: the plugin's own name].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Grant a capability it asks for besides `log`: judge, embeddings
    /// (repeatable).
    #[arg(long = "grant", value_name = "CAPABILITY")]
    pub grants: Vec<String>,
    /// Require a cosign signature by this public key (PEM), now and
    /// whenever a machine first fetches it; written as `cosign-key`.
    #[arg(long, value_name = "FILE")]
    pub cosign_key: Option<PathBuf>,
}

/// `assay plugin update`.
#[derive(Debug, Args)]
pub struct PluginUpdateArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// The `[plugins.NAME]` to update [default: every community plugin].
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
}

/// `assay plugin publish`.
#[derive(Debug, Args)]
pub struct PluginPublishArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Where to push: an OCI reference with a tag
    /// (`ghcr.io/acme/rouge:1.2.0`). Log in with ASSAY_REGISTRY_USERNAME
    /// and ASSAY_REGISTRY_PASSWORD.
    #[arg(value_name = "REF")]
    pub reference: String,
    /// The component, as `assay plugin build` printed it.
    #[arg(value_name = "FILE.wasm")]
    pub component: PathBuf,
}

/// `assay plugin new`.
#[derive(Debug, Args)]
pub struct PluginNewArgs {
    /// The plugin's name (lowercase letters, digits, `_`, `-`); its key is
    /// the name with `-` as `_`.
    pub name: String,
    /// Where to create the crate [default: ./NAME].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Where the crate gets assay-plugin-sdk: `vendored` (the SDK this
    /// binary carries, written into the crate's vendor/ folder: builds
    /// with nothing but Rust and crates.io), `registry` (the release of
    /// this assay's major.minor version from crates.io), or the PATH of a
    /// local crate (a checkout of assay's plugin-sdk/) [default: vendored].
    #[arg(long, value_name = "vendored|registry|PATH")]
    pub sdk: Option<String>,
    /// Create a Python metric plugin instead: `KEY.py` with
    /// `evaluate(output, expected)`, built with componentize-py.
    #[arg(long, conflicts_with = "sdk")]
    pub python: bool,
}

/// `assay plugin build`.
#[derive(Debug, Args)]
pub struct PluginBuildArgs {
    /// The plugin crate, or Python plugin (a folder with a pyproject.toml)
    /// [default: the current directory].
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Where plugins, agents and settings come from; every command takes these.
#[derive(Debug, Args)]
pub struct ProjectArgs {
    /// The configuration file [default: ./assay.toml, if present].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Also load this matcher plugin component (no grants; repeatable).
    #[arg(long = "plugin", value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
    /// Make the agent NAME the component FILE for `direct` (repeatable).
    #[arg(long = "agent", value_name = "NAME=FILE", value_parser = parse_named_path)]
    pub agents: Vec<(String, PathBuf)>,
    /// Where compiled components are cached, and answers in its judge/ and
    /// embeddings/ [default: ~/.cache/assay/components, answers beside it].
    #[arg(long, env = "ASSAY_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Use the cache directory `[cache] dir` of assay.toml, which is
    /// otherwise ignored: allow it only for a project you trust.
    #[arg(long, env = "ASSAY_ALLOW_PROJECT_CACHE_DIR", value_parser = clap::builder::BoolishValueParser::new())]
    pub allow_project_cache_dir: bool,
    /// Compile every component afresh, reading and writing no cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Ask the judge and the embeddings backend afresh, reading and writing
    /// no answer cache.
    #[arg(long)]
    pub no_judge_cache: bool,
}

/// What `${VAR}` in case and scenario files may read.
#[derive(Debug, Args)]
pub struct CaseEnvArgs {
    /// Let `${NAME}` in case files read the environment variable NAME
    /// (repeatable), besides `[cases] allow_env` and (except for `assay
    /// serve`, whose case files read only variables allowed by name)
    /// ASSAY_CASE_*.
    #[arg(long = "allow-env", value_name = "NAME")]
    pub allow_env: Vec<String>,
    /// Trust every case file, suite and promptfoo config of this run: let
    /// them run programs (`[setup] command`, `exec:`), read any variable
    /// and file, and send credentials where they say (else only the files
    /// `[trust] commands` of assay.toml names may; ASSAY_ALLOW_COMMANDS=1
    /// too, except for `assay serve`).
    #[arg(long)]
    pub allow_commands: bool,
}

/// `assay agent serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Agents to serve: names of known agents or paths to `.wasm` agent
    /// components (named after the file). Default: every known agent.
    #[arg(value_name = "NAME|COMPONENT")]
    pub names: Vec<String>,
    /// The port on 127.0.0.1 (0 picks a free one and prints it).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Serve HTTPS with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key for --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The protocol to speak: neuro-san's (`POST
    /// /api/v1/{agent}/streaming_chat`) or OpenAI's chat completions (`POST
    /// /v1/chat/completions`, the request's `model` naming the agent).
    #[arg(long, value_enum, default_value_t = ServeProtocol::NeuroSan)]
    pub protocol: ServeProtocol,
    /// Answer every chat this many milliseconds late, to stand in for a
    /// model's latency (benchmarks, timeout tests).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub latency_ms: u64,
    /// Close a connection whose request head, or then body, or TLS
    /// handshake, takes longer than this; idle connections too.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub read_timeout: f64,
    /// Serve at most this many connections at once; the next ones wait
    /// until one closes.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_connections: usize,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// The protocols `assay agent serve` speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ServeProtocol {
    /// neuro-san's HTTP protocol.
    NeuroSan,
    /// OpenAI's chat completions, under `/v1`.
    Openai,
}

/// `assay agent list`.
#[derive(Debug, Args)]
pub struct AgentListArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// Parses `NAME=PATH`.
pub fn parse_named_path(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok((name.to_owned(), PathBuf::from(path))),
        _ => Err(format!("`{text}` is not NAME=FILE (e.g. my_agent=target/my_agent.wasm)")),
    }
}

/// Parses `K/N` (`--shard`).
pub fn parse_shard(text: &str) -> Result<crate::run::Shard, String> {
    text.parse().map_err(|error: crate::errors::ShardError| error.to_string())
}

/// How http/https connections reach neuro-san servers.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The neuro-san server for http/https cases; the scheme follows each
    /// case's connection.
    /// [default: `[agent] url` in assay.toml, else http://localhost:8080]
    #[arg(long, env = "ASSAY_AGENT_URL", value_name = "URL")]
    pub agent_url: Option<String>,
    /// Trust the CA certificates in this PEM file for https.
    #[arg(long, env = "ASSAY_AGENT_CA", value_name = "FILE")]
    pub agent_ca: Option<PathBuf>,
}

/// `assay run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Test case files, directories (searched recursively for *.hocon and
    /// *.suite.toml) or globs [default: assay.toml's `[cases] paths`, else
    /// the project's folder].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Only the cases whose id contains this text or matches it as a regex.
    #[arg(long, value_name = "TEXT|REGEX")]
    pub filter: Option<String>,
    /// Run only shard K of N: the cases whose id's FNV-1a hash modulo N
    /// is K-1 (N machines each run one; `assay merge` joins them).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<crate::run::Shard>,
    /// Run only the cases that failed or errored in this results directory
    /// [default: results/latest, the last run].
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub rerun_failed: Option<Option<PathBuf>>,
    /// With --rerun-failed, run its flaky cases again too.
    #[arg(long, requires = "rerun_failed")]
    pub rerun_flaky: bool,
    /// List the selected cases and exit without running them.
    #[arg(long)]
    pub list: bool,
    /// Run again whenever a file of the project changes: the case files
    /// that changed, or every case when assay.toml, a plugin or a file
    /// cases read changed (until Ctrl-C).
    #[arg(long, conflicts_with_all = ["results", "rerun_failed", "replay", "list"])]
    pub watch: bool,
    /// Stop starting cases after the first that fails or errors (the cases
    /// running finish; the rest are reported as not run).
    #[arg(long, conflicts_with = "max_fail")]
    pub fail_fast: bool,
    /// Stop starting cases after N have failed or errored.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_fail: Option<u64>,
    /// How many samples run at once [default: CPUs × 4].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Bound every sample's whole time by this many seconds, overriding
    /// the cases' timeout_in_seconds [default: assay.toml's `[cases]
    /// timeout_in_seconds`, 300].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Show a case as SLOW once it has run this many seconds, and again at
    /// each further multiple [default: 60].
    #[arg(long, value_name = "SECS")]
    pub slow_timeout: Option<f64>,
    /// Run every case over these connections instead of its own
    /// (repeatable: direct, http, https).
    #[arg(long = "connection", value_name = "NAME")]
    pub connections: Vec<String>,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub case_env: CaseEnvArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Where results.jsonl and summary.json go [default: results/<timestamp>].
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Ask no agent: check the answers recorded in this results directory
    /// (its results.jsonl) with the cases' current checks.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// Also write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the HTML report here, at the end of the run (from the
    /// results directory the run wrote).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write promptfoo's output file (`promptfoo eval -o FILE`'s JSON)
    /// for the cases of promptfoo configs.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub promptfoo_output: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What a run's terminal shows, and whether flaky fails it (`run`,
/// `merge`).
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Exit with failure when a case is flaky.
    #[arg(long)]
    pub fail_on_flaky: bool,
    /// Show every case and every check.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Show only the summary.
    #[arg(short, long)]
    pub quiet: bool,
}

impl OutputArgs {
    /// The terminal's verbosity.
    pub fn verbosity(&self) -> crate::report::Verbosity {
        use crate::report::Verbosity;
        match (self.verbose, self.quiet) {
            (true, _) => Verbosity::Verbose,
            (_, true) => Verbosity::Quiet,
            _ => Verbosity::Normal,
        }
    }
}

/// `assay report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The results directory of a run (it holds results.jsonl and
    /// summary.json) [default: results/latest, the last run]; two or more,
    /// oldest first, make the page of their history.
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where the history page goes [default: history.html beside the last
    /// DIR].
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `assay merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The results directories to merge: shards of one run (`--shard`),
    /// and reruns (`--rerun-failed`), which replace the cases they reran.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where the merged results go (a new directory).
    #[arg(long, value_name = "DIR")]
    pub results: PathBuf,
    /// Merge even when shards of the run are missing (summary.json names
    /// them).
    #[arg(long)]
    pub allow_missing: bool,
    /// Merge directories whose run never finished (no summary.json), with
    /// the cases they recorded.
    #[arg(long)]
    pub allow_incomplete: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub case_env: CaseEnvArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// `assay assess`.
#[derive(Debug, Args)]
pub struct AssessArgs {
    /// Test case files, directories (searched recursively for *.hocon and
    /// *.suite.toml) or globs [default: assay.toml's `[cases] paths`, else
    /// the project's folder].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Only the cases whose id contains this text or matches it as a regex.
    #[arg(long, value_name = "TEXT|REGEX")]
    pub filter: Option<String>,
    /// Run only shard K of N: the cases whose id's FNV-1a hash modulo N
    /// is K-1 (N machines each run one; `assay merge` joins them).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<crate::run::Shard>,
    /// Run this many samples of each case [default: the denominator of its
    /// success_ratio].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub samples: Option<u32>,
    /// Also have the judge ([judge] in assay.toml) classify every failure,
    /// told the failure modes found so far.
    #[arg(long)]
    pub llm_modes: bool,
    /// How many samples run at once [default: CPUs × 4].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Bound every sample's whole time by this many seconds, overriding
    /// the cases' timeout_in_seconds [default: assay.toml's `[cases]
    /// timeout_in_seconds`, 300].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Run every case over these connections instead of its own
    /// (repeatable: direct, http, https).
    #[arg(long = "connection", value_name = "NAME")]
    pub connections: Vec<String>,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub case_env: CaseEnvArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Where assess.json and results.jsonl go [default: results/<timestamp>].
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Also write the HTML report here, with the assess section (from the
    /// results directory the run wrote).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `assay eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Scenario files (YAML, HOCON or JSON), or directories searched
    /// recursively for them.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Evaluate only shard K of N: the scenarios whose id's FNV-1a hash
    /// modulo N is K-1.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<crate::run::Shard>,
    /// Ask this agent, whatever the scenarios' own `agent` says.
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
    /// The connection to the agent: direct, http, https or a
    /// [connections.NAME] (default: [scenarios] connection of assay.toml,
    /// else direct).
    #[arg(long, value_name = "NAME")]
    pub connection: Option<String>,
    /// Ask each problem this many times.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub samples: u32,
    /// Judge every expectation with this matcher key instead of its own.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Exit with failure when a scenario scores below this (0 to 1).
    #[arg(long, value_name = "SCORE")]
    pub min_score: Option<f64>,
    /// How many requests run at once [default: CPUs × 4].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Bound every request by this many seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub case_env: CaseEnvArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Where eval.json goes [default: results/<timestamp>].
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Also write the HTML report here, with the eval section (from the
    /// results directory the run wrote).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `assay validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Validation files (YAML, HOCON or JSON, with `mock_responses`), or
    /// directories searched recursively for them.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Judge every expectation with this matcher key instead of its own.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Exit with failure when the overall agreement is below this (0 to 1).
    #[arg(long, value_name = "SCORE")]
    pub min_agreement: Option<f64>,
    /// How many mock responses are judged at once [default: CPUs × 4].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub case_env: CaseEnvArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Where validate.json goes [default: results/<timestamp>].
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Also write the HTML report here, with the validate section (from the
    /// results directory the run wrote).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `assay diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier run's results directory (results/<timestamp>)
    /// [default: the run before the last].
    pub old: Option<PathBuf>,
    /// The later run's results directory [default: results/latest].
    pub new: Option<PathBuf>,
    /// Let this much get worse before it counts as a regression
    /// (repeatable): newly-failing=N, newly-flaky=N, score-drop=X (any key's
    /// mean), score-drop:KEY=X. Each defaults to 0.
    #[arg(long, value_name = "NAME=VALUE")]
    pub allow: Vec<String>,
    /// List this many cases whose score moved most, each way, per key.
    #[arg(long, value_name = "N", default_value_t = crate::results::diff::DEFAULT_TOP)]
    pub top: usize,
    /// Print the diff as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also write the comparison as an HTML page here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `assay plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Test case files, directories (searched recursively for *.hocon and
    /// *.suite.toml) or globs [default: assay.toml's `[cases] paths`, else
    /// the project's folder].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub case_env: CaseEnvArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Print one JSON object per case instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `assay plugins`.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Pin every [plugins.NAME] in assay.toml to the sha256 of its file.
    #[arg(long)]
    pub lock: bool,
    /// Compile every plugin a run could load into the compile cache,
    /// promptfoo's built-ins (the Python and JavaScript runners) included:
    /// for a CI image, so that no run compiles on first use.
    #[arg(long, conflicts_with = "lock")]
    pub precompile: bool,
}

/// `assay check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The assertion key, e.g. `keywords` or `not_value`.
    #[arg(long)]
    pub key: String,
    /// The actual value as JSON, e.g. '"the Beatles"' or '19481.0'.
    #[arg(long)]
    pub actual: String,
    /// The expected value as JSON, e.g. '"Beatles"'.
    #[arg(long)]
    pub expected: String,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Print the verdict as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `assay serve`.
#[derive(Debug, Args)]
pub struct ServeApiArgs {
    /// The address to listen on: an IP, or IP:PORT. Anything beyond
    /// loopback needs a token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: String,
    /// The port, unless --bind gives one (0 picks a free one and prints it).
    #[arg(long, default_value_t = crate::serve::DEFAULT_PORT)]
    pub port: u16,
    /// A file holding the bearer token every request must carry
    /// (`Authorization: Bearer TOKEN`); else ASSAY_SERVE_TOKEN; else one is
    /// generated, printed once and saved in <root>/.assay/serve-token (0600).
    #[arg(long, value_name = "FILE", conflicts_with = "no_token")]
    pub token_file: Option<PathBuf>,
    /// Serve without a token (loopback only): any program of this machine,
    /// any user's included, may then start runs and checks.
    #[arg(long)]
    pub no_token: bool,
    /// The directory runs may name case paths under [default: .].
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Where each run's results directory goes, as DIR/<id> [default:
    /// <root>/.assay/serve-runs].
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// The largest request body, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 8)]
    pub max_body_mb: usize,
    /// Answer every request within this many seconds (503 or 504 after).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub request_timeout: f64,
    /// Handle at most this many requests at once; the next ones wait.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_requests: usize,
    /// Run at most this many runs at once; another is refused (429).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_runs: usize,
    /// Let a run have at most this many samples in flight [default: CPUs ×
    /// 4]; a run asking more is refused.
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Stop a run still running after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 3600.0)]
    pub run_timeout: f64,
    /// Keep the results directories of this many finished runs; older ones
    /// are removed.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub keep_runs: usize,
    /// Hold at most this many connections at once; the next ones wait.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_connections: usize,
    /// Close a connection whose request head takes longer than this.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub read_timeout: f64,
    /// Let web pages of this origin (e.g. https://app.example) call the
    /// server from a browser (repeatable); its own origin always may.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    #[command(flatten)]
    pub case_env: CaseEnvArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }
}
