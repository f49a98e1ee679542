//! What the hostile-corpus tests (`hostile_*.rs`) share: the corpus's
//! paths, running the `assay` binary under a time bound while measuring its
//! peak memory, temporary projects (an `assay.toml` and case files), reading
//! everything a run reports (terminal, `results.jsonl`, `summary.json`,
//! JUnit), and an `assay agent serve` child whose output cannot block it.
//!
//! A hostile plugin must never hang a test: every command runs under
//! [`KILL_AFTER`], after which it is killed and the test fails saying so.

use crate::util::root;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The deadline the tests give hostile plugins, in milliseconds: short, so
/// that the suite stays quick.
pub const DEADLINE_MS: u64 = 500;

/// How much longer than its deadline a command may take, all told: process
/// start, loading the plugins from the compile cache (about 0.1 s in a debug
/// build), the other cases; several times that, for a loaded machine. Far
/// below what a plugin that escapes its deadline takes (forever, or for a
/// plugin asking the judge in a loop, about seven times its deadline).
pub const SLACK: Duration = Duration::from_millis(2500);

/// The deadline of the plugin that asks the judge in a loop, in
/// milliseconds: long enough that its escape (about seven times the
/// deadline, on cache hits that the deadline does not count) stands out from
/// [`SLACK`].
pub const JUDGE_LOOP_DEADLINE_MS: u64 = 1500;

/// When a command still running is killed (and its test fails).
pub const KILL_AFTER: Duration = Duration::from_secs(20);

/// The peak resident memory a process running a memory bomb may reach: far
/// below the 400 MiB the bomb holds when the cap counts each memory apart.
pub const MAX_PEAK_RSS_MB: u64 = 300;

/// The WAT matcher that blocks in WASI, prints and exits.
pub const WASI_IO: &str = "fixtures/plugins/wat/wasi-io.wasm";
/// The WAT matcher that asks the judge in an endless loop.
pub const JUDGE_LOOP: &str = "fixtures/plugins/wat/judge-loop.wasm";
/// The WAT matcher with eleven memories.
pub const MULTI_MEMORY: &str = "fixtures/plugins/wat/multi-memory.wasm";
/// The WAT matcher with 100 tables.
pub const TABLE_BOMB: &str = "fixtures/plugins/wat/table-bomb.wasm";
/// The WAT agent that blocks, prints or exits by the text it is sent.
pub const HOSTILE_AGENT: &str = "fixtures/plugins/wat/hostile-agent.wasm";
/// The componentize-py matcher that prints, raises, sleeps and exits.
pub const HOSTILE_PY: &str = "fixtures/plugins/hostile-py/hostile-py.wasm";
/// The Rust matcher that misbehaves in Rust ways (here: a plugin with a
/// memory limit over 1 GiB, which puts the whole runtime on the on-demand
/// engine).
pub const HOSTILE_RUST: &str = "fixtures/plugins/hostile/hostile.wasm";

/// The absolute path of a file of the repository, as a string.
pub fn path(relative: &str) -> String {
    root().join(relative).to_str().expect("the repository path is UTF-8").to_owned()
}

/// The `assay` binary with `args`, run from the repository root, with no
/// judge or embeddings from the environment and short panic messages.
pub fn assay_command(args: &[&str]) -> Command {
    let mut command = crate::util::assay_command();
    command.args(args).env("RUST_BACKTRACE", "0");
    for name in [
        "ASSAY_JUDGE_URL",
        "ASSAY_JUDGE_MODEL",
        "ASSAY_JUDGE_API_KEY",
        "ASSAY_EMBEDDINGS_URL",
        "ASSAY_EMBEDDINGS_MODEL",
        "ASSAY_EMBEDDINGS_API_KEY",
        "ASSAY_AGENT_URL",
    ] {
        command.env_remove(name);
    }
    command
}

/// How a bounded command ended.
#[derive(Debug)]
pub struct Finished {
    /// The exit code (`None` when a signal ended it).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// From spawn to exit.
    pub elapsed: Duration,
    /// The peak resident memory of the process, in MiB.
    pub peak_rss_mb: u64,
    /// Whether it was killed after [`KILL_AFTER`].
    pub killed: bool,
}

impl Finished {
    /// A summary for assertion messages (long output cut).
    pub fn describe(&self) -> String {
        format!(
            "exit code {:?} after {:.2?}{}, peak RSS {} MiB\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            self.elapsed,
            if self.killed { " (killed: it did not finish)" } else { "" },
            self.peak_rss_mb,
            cut(&self.stdout, 3000),
            cut(&self.stderr, 3000)
        )
    }

    /// Panics unless the command finished by itself within `bound`.
    pub fn assert_within(&self, bound: Duration) {
        assert!(!self.killed, "assay was still running after {KILL_AFTER:?} and was killed: {}", self.describe());
        assert!(self.elapsed <= bound, "assay took {:.2?}, more than {bound:?}: {}", self.elapsed, self.describe());
    }

    /// Standard output as one JSON value (`assay check --json`).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {}", self.describe()))
    }
}

/// The first `max` bytes of `text` (on a character boundary), marked when cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} … [{} more bytes]", &text[..end], text.len() - end)
}

/// Runs `command` to its end, or kills it after [`KILL_AFTER`], measuring
/// its time and peak resident memory: the high-water mark of its own
/// address space (`VmHWM` of `/proc/PID/status`), polled every 5 ms while
/// it runs. Not `wait4`'s `ru_maxrss`: Linux keeps in it the spawning
/// process's peak from before `exec`, so a child of a test process that
/// compiled a large component looked that large itself.
#[expect(clippy::zombie_processes, reason = "wait4 reaps the child, which is how its peak memory is read")]
pub fn run_bounded(mut command: Command) -> Finished {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().expect("failed to start assay");
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    let mut killed = false;
    let mut peak_kib = 0u64;
    let (status, _usage) = loop {
        peak_kib = peak_kib.max(high_water_kib(pid).unwrap_or(0));
        let mut status: libc::c_int = 0;
        // SAFETY: an all-zero rusage is a valid value of the plain C struct.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own child, not yet reaped (std reaps only in
        // `wait`, which is never called on it); the pointers are to live
        // locals.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break (status, usage);
        }
        assert!(
            reaped == 0 || std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted,
            "wait4 failed"
        );
        if !killed && started.elapsed() > KILL_AFTER {
            let _ = child.kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let peak_rss_mb = peak_kib / 1024;
    Finished {
        code,
        stdout: stdout.join().expect("the stdout reader does not panic"),
        stderr: stderr.join().expect("the stderr reader does not panic"),
        elapsed,
        peak_rss_mb,
        killed,
    }
}

/// Reads a pipe to its end on a thread, so that the child never blocks on
/// a full pipe.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `assay ARGS` under the bound.
pub fn assay_bounded(args: &[&str]) -> Finished {
    run_bounded(assay_command(args))
}

/// Loads every plugin the configuration file `config` names once, untimed,
/// so that no timed command pays for compiling it into the per-user compile
/// cache (the Python plugin takes many seconds to compile in a debug build).
/// Each configuration is warmed once per test process.
pub fn warm(config: &str) {
    static WARMED: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let text = std::fs::read_to_string(config).expect("the config exists");
    let mut warmed = WARMED.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
    if warmed.contains(&text) {
        return;
    }
    let output = assay_command(&["plugins", "--config", config]).output().unwrap();
    assert!(output.status.success(), "loading {text} failed: {}", String::from_utf8_lossy(&output.stderr));
    warmed.push(text);
}

/// [`warm`] for the corpus file `file` with default settings (as `--plugin`
/// loads it).
pub fn warm_plugin(file: &str) {
    let project = Project::new(&format!("[plugins.warm]\npath = \"{}\"\n", path(file)));
    warm(&project.config());
}

/// A temporary project: an `assay.toml` and a folder of case files.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// A project whose `assay.toml` is `config`, in `cases/` with the
    /// cases: the project's root, so that a case's id is its file's stem.
    pub fn new(config: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("cases")).unwrap();
        std::fs::write(dir.path().join("cases/assay.toml"), config).unwrap();
        Project { dir }
    }

    /// The `assay.toml`, as a string.
    pub fn config(&self) -> String {
        self.dir.path().join("cases/assay.toml").to_str().unwrap().to_owned()
    }

    /// A folder in the project (not created).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes the case `cases/ID.hocon` (its id is `ID`).
    pub fn case(&self, id: &str, text: &str) {
        std::fs::write(self.dir.path().join("cases").join(format!("{id}.hocon")), text).unwrap();
    }

    /// A case talking to `agent`: one interaction sending `text`, whose
    /// response `text` is checked with `checks` (a HOCON object body, e.g.
    /// `"value": "x"`), under an interaction timeout when given.
    pub fn simple_case(&self, id: &str, agent: &str, text: &str, checks: &str, timeout_secs: Option<f64>) {
        let timeout = timeout_secs.map(|t| format!(r#""timeout_in_seconds": {t}, "#)).unwrap_or_default();
        self.case(
            id,
            &format!(
                r#"{{ "agent": "{agent}", "interactions": [ {{ "text": "{text}", {timeout}"response": {{ "text": {{ {checks} }} }} }} ] }}"#
            ),
        );
    }

    /// Runs `assay run cases/ --config cases/assay.toml` with results and JUnit in
    /// the project, every case on the terminal (`--verbose`), and `extra`
    /// arguments, under the bound.
    pub fn run(&self, extra: &[&str]) -> Run {
        let (cases, results, junit) = (self.path("cases"), self.path("results"), self.path("junit.xml"));
        let config = self.config();
        let mut args = vec!["run", cases.to_str().unwrap(), "--config", &config];
        args.extend(["--results", results.to_str().unwrap(), "--junit", junit.to_str().unwrap(), "--verbose"]);
        args.extend_from_slice(extra);
        Run::read(assay_bounded(&args), &results, &junit)
    }
}

/// Everything one `assay run` reported.
pub struct Run {
    /// The process.
    pub finished: Finished,
    /// The lines of `results.jsonl` (empty when it was not written).
    pub results: Vec<Value>,
    /// `summary.json` (null when it was not written).
    pub summary: Value,
    /// The JUnit report (empty when it was not written).
    pub junit: String,
}

impl Run {
    fn read(finished: Finished, results_dir: &Path, junit: &Path) -> Run {
        let lines = std::fs::read_to_string(results_dir.join("results.jsonl")).unwrap_or_default();
        let results = lines
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("results.jsonl has a bad line ({e}): {l}")))
            .collect();
        let summary = std::fs::read_to_string(results_dir.join("summary.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null);
        let junit = std::fs::read_to_string(junit).unwrap_or_default();
        Run { finished, results, summary, junit }
    }

    /// A summary for assertion messages.
    pub fn describe(&self) -> String {
        format!("{}\n--- summary.json\n{}", self.finished.describe(), self.summary)
    }

    /// Checks that each case of `expected` was reported exactly once,
    /// everywhere, as expected, that no other case was, and that the run
    /// exited with `exit_code`; panics listing every difference.
    pub fn assert_cases(&self, expected: &[Expect], exit_code: i32) {
        let mut problems = Vec::new();
        if self.finished.code != Some(exit_code) {
            problems.push(format!("the exit code is {:?}, not {exit_code}", self.finished.code));
        }
        let ids: Vec<&str> = self.results.iter().filter_map(|r| r["id"].as_str()).collect();
        for id in &ids {
            if !expected.iter().any(|e| e.id == *id) {
                problems.push(format!("results.jsonl has an unexpected case `{id}`"));
            }
        }
        for expect in expected {
            expect.check(self, &mut problems);
        }
        self.check_summary(expected, &mut problems);
        assert!(problems.is_empty(), "{}\n\n{}", problems.join("\n"), self.describe());
    }

    fn check_summary(&self, expected: &[Expect], problems: &mut Vec<String>) {
        if self.summary.is_null() {
            problems.push("summary.json was not written".into());
            return;
        }
        let count = |status: &str| expected.iter().filter(|e| e.status == status).count();
        for (field, status) in [("passed", "passed"), ("failed", "failed"), ("errors", "error")] {
            if self.summary[field] != count(status) {
                problems.push(format!("summary.json counts {} {field}, not {}", self.summary[field], count(status)));
            }
        }
        if self.summary["cases"] != expected.len() {
            problems.push(format!("summary.json counts {} cases, not {}", self.summary["cases"], expected.len()));
        }
        for status in ["failed", "error"] {
            let mut listed: Vec<&str> = self.summary["not_passed"][status]
                .as_array()
                .map(|ids| ids.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            listed.sort_unstable();
            let mut wanted: Vec<&str> = expected.iter().filter(|e| e.status == status).map(|e| e.id).collect();
            wanted.sort_unstable();
            if listed != wanted {
                problems.push(format!("summary.json lists {listed:?} as {status}, not {wanted:?}"));
            }
        }
    }

    /// The results line of case `id`, if there is exactly one.
    pub fn case(&self, id: &str) -> Option<&Value> {
        let mut lines = self.results.iter().filter(|r| r["id"] == id);
        let first = lines.next();
        if lines.next().is_some() { None } else { first }
    }
}

/// What one case of a run must look like.
#[derive(Clone, Debug)]
pub struct Expect {
    /// The case id (its file stem).
    pub id: &'static str,
    /// `passed`, `failed` or `error`.
    pub status: &'static str,
    /// The error kind of its first check (a verdict's `error_kind`), or of
    /// its failed request, when it must have one.
    pub kind: Option<&'static str>,
    /// Text the first check's message (or the failed request's message)
    /// must contain.
    pub message: Option<&'static str>,
    /// Log lines the matcher plugins must have written while checking the
    /// first interaction: (plugin, level, text the lines contain).
    pub logs: Vec<(&'static str, &'static str, &'static str)>,
}

impl Expect {
    /// A case that must end with `status`.
    pub fn new(id: &'static str, status: &'static str) -> Expect {
        Expect { id, status, kind: None, message: None, logs: Vec::new() }
    }

    /// A case whose first check (or request) is an error of `kind`.
    pub fn error(id: &'static str, kind: &'static str) -> Expect {
        Expect { kind: Some(kind), ..Expect::new(id, "error") }
    }

    /// With a message that contains `text`.
    pub fn message(mut self, text: &'static str) -> Expect {
        self.message = Some(text);
        self
    }

    /// With log lines of `plugin` at `level` that contain `text`.
    pub fn log(mut self, plugin: &'static str, level: &'static str, text: &'static str) -> Expect {
        self.logs.push((plugin, level, text));
        self
    }

    fn check(&self, run: &Run, problems: &mut Vec<String>) {
        let id = self.id;
        let lines = run.results.iter().filter(|r| r["id"] == id).count();
        if lines != 1 {
            problems.push(format!("case `{id}` has {lines} lines in results.jsonl, not 1"));
        }
        if let Some(line) = run.case(id) {
            if line["status"] != self.status {
                problems.push(format!("case `{id}` is {} in results.jsonl, not {}", line["status"], self.status));
            }
            let interaction = &line["samples"][0]["runs"][0]["interactions"][0];
            let check = &interaction["checks"][0];
            let (kind, message) = if interaction["error"].is_object() {
                (&interaction["error"]["kind"], &interaction["error"]["message"])
            } else {
                (&check["error_kind"], &check["message"])
            };
            if let Some(wanted) = self.kind
                && kind != wanted
            {
                problems.push(format!("case `{id}`: the error kind is {kind}, not {wanted:?} (message {message})"));
            }
            if let Some(wanted) = self.message
                && !message.as_str().is_some_and(|m| m.contains(wanted))
            {
                problems.push(format!("case `{id}`: the message {message} does not contain {wanted:?}"));
            }
            for &(plugin, level, text) in &self.logs {
                let logged = log_text(interaction, plugin, level);
                if !logged.contains(text) {
                    problems.push(format!(
                        "case `{id}`: plugin `{plugin}` logged no {level} line containing {text:?} (logs: {})",
                        cut(&interaction["logs"].to_string(), 600)
                    ));
                }
            }
        }
        self.check_terminal(run, problems);
        self.check_junit(run, problems);
    }

    fn check_terminal(&self, run: &Run, problems: &mut Vec<String>) {
        let label = match self.status {
            "passed" => "PASS",
            "failed" => "FAIL",
            _ => "ERROR",
        };
        let id = self.id;
        let lines: Vec<&str> = run
            .finished
            .stdout
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                l.split_once("s] ").is_some_and(|(head, rest)| head.contains(" [") && rest == id)
            })
            .collect();
        if lines.len() != 1 || !lines[0].trim_start().starts_with(label) {
            problems.push(format!("case `{id}` has the terminal lines {lines:?}, not one {label} line"));
        }
    }

    fn check_junit(&self, run: &Run, problems: &mut Vec<String>) {
        let id = self.id;
        let cases: Vec<&str> =
            run.junit.split("<testcase ").skip(1).filter(|c| c.starts_with(&format!("name=\"{id}\""))).collect();
        if cases.len() != 1 {
            problems.push(format!("case `{id}` has {} <testcase> elements in the JUnit report, not 1", cases.len()));
            return;
        }
        let (error, failure) = (cases[0].contains("<error"), cases[0].contains("<failure"));
        let right = match self.status {
            "passed" => !error && !failure,
            "failed" => failure && !error,
            _ => error && !failure,
        };
        if !right {
            problems.push(format!(
                "case `{id}`'s JUnit <testcase> does not say {}: {}",
                self.status,
                cut(cases[0], 400)
            ));
        }
    }
}

/// Everything `plugin` logged at `level` for an interaction, joined.
pub fn log_text(interaction: &Value, plugin: &str, level: &str) -> String {
    let Some(logs) = interaction["logs"].as_array() else { return String::new() };
    logs.iter()
        .filter(|log| log["plugin"] == plugin)
        .flat_map(|log| log["lines"].as_array().into_iter().flatten())
        .filter(|line| line["level"] == level)
        .filter_map(|line| line["message"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// An `assay agent serve` child on a free port whose output goes to a file
/// and a draining thread (so that nothing it prints can block it), killed on
/// drop.
pub struct Server {
    child: Child,
    /// The URL it serves on, e.g. `http://127.0.0.1:41234`.
    pub url: String,
    stderr: tempfile::NamedTempFile,
}

impl Server {
    /// Starts `assay agent serve --port 0 ARGS…`.
    pub fn start(args: &[&str]) -> Server {
        let stderr = tempfile::NamedTempFile::new().unwrap();
        let mut command = assay_command(&["agent", "serve", "--port", "0"]);
        command.args(args).stdout(Stdio::piped()).stderr(stderr.reopen().unwrap()).stdin(Stdio::null());
        let mut child = command.spawn().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let Some((_, url)) = line.trim().rsplit_once(" on ") else {
            let _ = child.kill();
            panic!("`assay agent serve` printed {line:?}; stderr: {}", std::fs::read_to_string(stderr.path()).unwrap());
        };
        Server { child, url: url.to_owned(), stderr }
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// What it wrote to stderr so far.
    pub fn stderr(&self) -> String {
        cut(&std::fs::read_to_string(self.stderr.path()).unwrap_or_default(), 3000)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The high-water mark of `pid`'s resident memory in KiB, while it runs.
fn high_water_kib(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
