//! Helpers shared by the integration tests: fixture paths, loading fixture
//! plugins, running the `assay` binary.

use assay::plugin::{ActualValue, BatchOutput, CheckInput, MatcherPlugin, PluginScope};
use assay::sandbox::{ComponentOptions, ComponentSource, Limits, Runtime};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// A reporter that keeps every finished case.
#[derive(Default)]
pub struct Collect(pub Vec<assay::job::CaseResult>);

impl assay::run::Reporter for Collect {
    fn report(&mut self, event: &assay::run::RunEvent<'_>) -> std::io::Result<()> {
        if let assay::run::EventKind::CaseFinished(case) = event.kind {
            self.0.push((*case).clone());
        }
        Ok(())
    }
}

/// Runs the case files in `dir` with `registry` against the demo agents
/// (in process, or over HTTP at `http`'s base URL) and keeps every result.
pub fn run_dir(
    registry: std::sync::Arc<assay::plugin::Registry>,
    dir: &std::path::Path,
    http: assay::agent::HttpSettings,
    options: assay::run::RunOptions,
) -> (Vec<assay::job::CaseResult>, assay::run::RunSummary) {
    use assay::agent::{AgentCatalog, Agents, HttpAgents};
    use assay::job::{CaseSource, load_cases};
    use assay::run::Runner;
    let catalog = AgentCatalog::with_demo_agents(runtime().clone(), Limits::default());
    let agents = Agents::new(catalog, HttpAgents::new(http).unwrap());
    let files = assay::formats::discover(&[dir.to_path_buf()]).unwrap();
    let cases = CaseSource::loaded(load_cases(&files, registry.as_ref(), &Default::default(), None));
    let mut collect = Collect::default();
    let summary = Runner::new(registry, agents, options).run_blocking(cases, &mut collect);
    (collect.0, summary)
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A path under `fixtures/`.
pub fn fixture(path: &str) -> PathBuf {
    root().join("fixtures").join(path)
}

/// Two first-party plugins that the binary does not embed precompiled
/// (`sandbox/precompiled.rs`), by their paths from the workspace root:
/// loading one compiles it, or loads it from the compile cache, as the
/// compile cache's tests need.
pub const COMPILED_PLUGINS: [&str; 2] = ["plugins/rouge/rouge.wasm", "plugins/levenshtein/levenshtein.wasm"];

/// `--plugin` arguments that load [`COMPILED_PLUGINS`].
pub fn compiled_plugin_args() -> Vec<String> {
    COMPILED_PLUGINS.iter().flat_map(|path| ["--plugin".to_owned(), root().join(path).display().to_string()]).collect()
}

/// One runtime for the whole test binary, as in a real process.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(Runtime::default)
}

/// Loads a fixture plugin component with the given options.
pub fn load(path: &str, options: ComponentOptions) -> Result<MatcherPlugin, assay::errors::ComponentLoadError> {
    let path = fixture(path);
    let bytes = std::fs::read(&path).unwrap();
    MatcherPlugin::load(runtime(), ComponentSource::File(path), &bytes, options)
}

/// Options with a short deadline, so that tests of runaway plugins are quick.
pub fn quick_limits() -> Limits {
    Limits { deadline: std::time::Duration::from_millis(200), ..Limits::default() }
}

/// A check of `key` on actual `actual` expecting the JSON text `expected`,
/// whose value lives as long as the test (leaked: tests are short).
pub fn check_input(key: &'static str, actual: u32, expected: &'static str) -> CheckInput<'static> {
    let value: &'static serde_json::Value =
        Box::leak(Box::new(serde_json::from_str(expected).expect("the test's expected value is JSON")));
    CheckInput { key, actual, expected: value, expected_json: expected }
}

/// Evaluates one check with a text actual, in a scope of its own (no
/// earlier fault counts against the plugin).
pub fn eval_one(plugin: &MatcherPlugin, key: &str, actual: &str, expected: &str) -> BatchOutput {
    eval_in(plugin, &PluginScope::default(), key, actual, expected)
}

/// Evaluates one check with a text actual, its faults counted in `streak`.
pub fn eval_in(plugin: &MatcherPlugin, streak: &PluginScope, key: &str, actual: &str, expected: &str) -> BatchOutput {
    let value: serde_json::Value = serde_json::from_str(expected).expect("the test's expected value is JSON");
    let check = CheckInput { key, actual: 0, expected: &value, expected_json: expected };
    plugin.evaluate(&[ActualValue::Text(actual)], &[check], streak, None, None)
}

/// The home of the `assay` processes the tests start: their configuration
/// (where the cache key lives) and cache directories, never the real
/// user's.
pub fn test_home() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("home")
}

/// The `assay` binary, run from the workspace root, with `XDG_CONFIG_HOME`
/// and `XDG_CACHE_HOME` in [`test_home`] and no cache settings from the
/// environment.
pub fn assay_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    isolated(&mut command);
    command
}

/// `command` (the `assay` binary, or a shell that starts it) run from the
/// repository root with the tests' own home: the real user's key and caches
/// are never touched.
pub fn isolated(command: &mut Command) -> &mut Command {
    let home = test_home();
    command
        .current_dir(root())
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("ASSAY_CACHE_DIR")
        .env_remove("ASSAY_ALLOW_PROJECT_CACHE_DIR")
        .env_remove("ASSAY_ALLOW_COMMANDS")
}

/// Runs the `assay` binary.
pub fn assay(args: &[&str]) -> Output {
    assay_command().args(args).output().unwrap()
}

/// Runs the `assay` binary with the judge at `url` (model `m`), or with no
/// judge, whatever the environment says.
pub fn assay_with_judge(url: Option<&str>, args: &[&str]) -> Output {
    let mut command = assay_command();
    command.args(args).env_remove("ASSAY_JUDGE_URL").env_remove("ASSAY_JUDGE_MODEL");
    if let Some(url) = url {
        command.env("ASSAY_JUDGE_URL", url).env("ASSAY_JUDGE_MODEL", "m");
    }
    command.output().unwrap()
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// An `assay agent serve` child process, killed on drop. Its stdout and
/// stderr are read all along (a server whose pipes fill up would block).
pub struct Served {
    child: std::process::Child,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// What it printed to stdout: the first line, and the rest once it ends.
    stdout: Option<(String, std::thread::JoinHandle<String>)>,
    /// The URL it printed, e.g. `http://127.0.0.1:41234`.
    pub url: String,
}

impl Served {
    /// Starts `assay agent serve --port 0 ARGS…` and waits for its
    /// "serving … on URL" line.
    pub fn start(args: &[&str]) -> Served {
        let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
        command.args(["agent", "serve", "--port", "0"]).args(args);
        Served::spawn(command)
    }

    /// Starts `command`, an `assay agent serve --port 0 …` started some
    /// other way (under `sh -c` with a lower limit, say), and waits for its
    /// "serving … on URL" line.
    pub fn spawn(mut command: Command) -> Served {
        use std::io::{BufRead, Read};
        let mut child = isolated(&mut command)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let rest = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            text
        });
        let Some((_, url)) = line.trim().rsplit_once(" on ") else {
            let _ = child.kill();
            let err = stderr.join().unwrap();
            panic!("`assay agent serve` printed {line:?}; stderr: {err}");
        };
        let url = url.to_owned();
        Served { child, stderr: Some(stderr), stdout: Some((line, rest)), url }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.url.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Stops it: what it wrote to stderr.
    pub fn stop(self) -> String {
        self.stop_with_stdout().1
    }

    /// Stops it: what it wrote to stdout and to stderr.
    pub fn stop_with_stdout(mut self) -> (String, String) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let (first, rest) = self.stdout.take().unwrap();
        (first + &rest.join().unwrap(), self.stderr.take().unwrap().join().unwrap())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
