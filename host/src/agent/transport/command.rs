//! The `command` connection: an agent that is a local program, spoken to
//! over its stdin and stdout, one JSON line each way per turn. The main
//! type is [`CommandAgents`], built from [`CommandSettings`].
//!
//! Each request is one line on the process's stdin:
//!
//! ```json
//! {"agent": "orders", "text": "where is order 7?", "sly_data": {"user": "ann"},
//!  "chat_context": null, "chat_filter": "MINIMAL",
//!  "metadata": {"x-assay-sample": "0"}, "sample": 0}
//! ```
//!
//! (`sly_data`: the carried and the turn's own, or null; `chat_context`:
//! what the previous answer returned when the turn continues the
//! conversation, else null; `sample`: the 0-based sample.) Each answer is
//! one line on its stdout, every field optional:
//!
//! ```json
//! {"text": "It ships today.", "structure": {"order": 7}, "sly_data": {"seen": true},
//!  "chat_context": {"history": ["..."]}, "usage": {"prompt_tokens": 9, "completion_tokens": 4}}
//! ```
//!
//! or `{"error": "MESSAGE"}` for a request the agent refuses. A JSON object
//! in the text also becomes the structure, when the answer has none (the
//! text is kept whole); unknown fields are malformed.
//!
//! Processes are long-lived and pooled: a request takes an idle process or
//! starts one, so there are never more than requests in flight, and gives it
//! back once it has answered. A process that fails (exits, writes a line
//! that is no answer, passes the size cap, goes silent past the idle
//! timeout) or whose request is cancelled half-way is killed, never reused:
//! the next request starts a fresh one. Its stderr is read all along, its
//! last 2 KiB kept for error messages.

use crate::agent::message::{ChatMessage, ChatRequest};
use crate::agent::reduce::{AgentResponse, Usage, reduce_keeping_text};
use crate::agent::transport::{Reply, Transport};
use crate::credentials::redact_urls;
use crate::errors::{AgentErrorKind, ProcessFault};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

/// The `PATH` a process gets unless `env` lists `PATH`: the system's
/// programs, none of the user's.
pub const MINIMAL_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// How much of a process's stderr is kept for error messages.
const STDERR_TAIL_BYTES: usize = 2 << 10;

/// How long a failed process gets to exit, and its stderr to close, before
/// the error is reported without them.
const GRACE: Duration = Duration::from_millis(500);

/// How to start and talk to an agent program.
#[derive(Clone, Debug)]
pub struct CommandSettings {
    /// The program and its arguments. A bare program name is looked up in
    /// assay's `PATH`, as a shell would; a relative path starts from `dir`.
    pub command: Vec<String>,
    /// The environment variables the process gets from assay's, by name
    /// (unset ones are left out). It gets no others, but [`MINIMAL_PATH`]
    /// as `PATH` unless `PATH` is listed.
    pub env: Vec<String>,
    /// The folder the process runs in.
    pub dir: PathBuf,
    /// How long the process may stay silent while a request waits (default
    /// 120 s).
    pub idle_timeout: Duration,
    /// The longest answer line accepted, in bytes (default 16 MiB).
    pub max_response_bytes: usize,
}

/// Agents that are local programs, with a pool of their processes.
pub struct CommandAgents {
    settings: CommandSettings,
    /// The command as shown in messages.
    shown: String,
    /// Processes that answered their last request, most recent last.
    idle: Mutex<Vec<Process>>,
}

impl std::fmt::Debug for CommandAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandAgents").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl CommandAgents {
    /// Checks the settings; starts nothing yet.
    pub fn new(settings: CommandSettings) -> Result<CommandAgents, String> {
        match settings.command.first() {
            None => return Err("`command` is empty\n\nConsider command = [\"python3\", \"agent.py\"]".into()),
            Some(program) if program.is_empty() => return Err("`command` starts with an empty program name".into()),
            Some(_) => {}
        }
        if let Some(name) = settings.env.iter().find(|name| !is_variable_name(name)) {
            return Err(format!(
                "`env` names {name:?}, which is not an environment variable name\n\nConsider the variable's exact name, e.g. OPENAI_API_KEY"
            ));
        }
        if !settings.dir.is_dir() {
            return Err(format!(
                "`dir` `{}` is not a folder\n\nConsider a folder that exists; a relative one starts from the folder of assay.toml",
                settings.dir.display()
            ));
        }
        if settings.max_response_bytes == 0 {
            return Err("`max_response_mb` must be at least 1".into());
        }
        // The process runs in `dir`: a relative program path must not be
        // read from another folder on some platforms and this one on others.
        let dir = std::fs::canonicalize(&settings.dir)
            .map_err(|e| format!("`dir` `{}` cannot be resolved: {e}", settings.dir.display()))?;
        let shown = format!("command `{}`", redact_urls(&shown_command(&settings.command)));
        Ok(CommandAgents { settings: CommandSettings { dir, ..settings }, shown, idle: Mutex::default() })
    }

    /// Sends one request to a process of the pool and reads its answer.
    async fn ask(&self, request: &ChatRequest) -> Result<AgentResponse, AgentErrorKind> {
        let line = request_line(request);
        let mut process = match self.take_idle() {
            Some(process) => process,
            None => self.start().map_err(|cause| AgentErrorKind::Process {
                fault: ProcessFault::Start(cause),
                stderr: String::new(),
            })?,
        };
        // If this future is dropped from here on (a timeout), `process` is
        // dropped with it, which kills it: a half-answered process never
        // serves another request.
        let answer = match process.exchange(&line, &self.settings).await {
            Ok(answer) => parse_answer(&answer),
            Err(stop) => Err(match stop {
                Stop::Closed => ProcessFault::Exited(process.how_it_ended().await),
                Stop::Silent => ProcessFault::Silent(self.settings.idle_timeout),
                Stop::TooLarge => ProcessFault::TooLarge(self.settings.max_response_bytes),
            }),
        };
        match answer {
            Ok(answer) => {
                self.idle.lock().expect("the pool's lock").push(process);
                answer
            }
            Err(fault) => Err(AgentErrorKind::Process { stderr: process.end().await, fault }),
        }
    }

    /// The most recently used idle process that is still running.
    fn take_idle(&self) -> Option<Process> {
        let mut idle = self.idle.lock().expect("the pool's lock");
        // One that exited while idle is dropped (and reaped): it was not
        // asked anything, so its exit is no request's error.
        std::iter::from_fn(|| idle.pop()).find_map(|mut process| process.is_running().then_some(process))
    }

    /// Starts a process: what is wrong when it cannot be.
    fn start(&self) -> Result<Process, String> {
        let program = self.program()?;
        let mut child = tokio::process::Command::new(&program)
            .args(&self.settings.command[1..])
            .current_dir(&self.settings.dir)
            .env_clear()
            .envs(environment(&self.settings.env, |name| std::env::var_os(name)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("`{}` in `{}`: {e}", program.display(), self.settings.dir.display()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three pipes were asked for");
        };
        let tail = Arc::new(Mutex::new(StderrTail::default()));
        let reader = tokio::spawn(keep_stderr_tail(stderr, tail.clone()));
        Ok(Process { child, stdin, stdout: BufReader::new(stdout), stderr: tail, stderr_reader: reader })
    }

    /// The program to start: a bare name looked up in assay's `PATH`, a
    /// path from `dir`.
    fn program(&self) -> Result<PathBuf, String> {
        let program = Path::new(&self.settings.command[0]);
        if program.components().count() > 1 || program.is_absolute() {
            return Ok(self.settings.dir.join(program));
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|folder| folder.join(program))
            .find(|candidate| is_executable(candidate))
            .ok_or_else(|| format!("no program `{}` in PATH", program.display()))
    }
}

/// The environment a process gets: the `listed` variables that `lookup`
/// finds, and a `PATH` ([`MINIMAL_PATH`] unless `PATH` is listed). A
/// suite's setup command gets the same (`crate::formats::suite`).
pub(crate) fn environment(listed: &[String], lookup: impl Fn(&str) -> Option<OsString>) -> Vec<(OsString, OsString)> {
    let mut variables: Vec<_> =
        listed.iter().filter_map(|name| lookup(name).map(|value| (OsString::from(name), value))).collect();
    if !listed.iter().any(|name| name == "PATH") {
        variables.push(("PATH".into(), MINIMAL_PATH.into()));
    }
    variables
}

impl Transport for CommandAgents {
    fn endpoint(&self, _agent: &str) -> String {
        self.shown.clone()
    }

    fn chat<'a>(&'a self, request: &'a ChatRequest) -> Reply<'a> {
        Box::pin(self.ask(request))
    }
}

/// One running process and its pipes.
struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<StderrTail>>,
    stderr_reader: JoinHandle<()>,
}

/// Why a process gave no answer line.
enum Stop {
    /// Its stdin or stdout closed.
    Closed,
    /// Nothing arrived for the idle timeout.
    Silent,
    /// The line passed the cap.
    TooLarge,
}

impl Process {
    /// Writes `request` and reads the answer line (without its newline).
    async fn exchange(&mut self, request: &[u8], settings: &CommandSettings) -> Result<Vec<u8>, Stop> {
        let write = async {
            self.stdin.write_all(request).await?;
            self.stdin.flush().await
        };
        match tokio::time::timeout(settings.idle_timeout, write).await {
            Err(_) => return Err(Stop::Silent),
            Ok(Err(_)) => return Err(Stop::Closed),
            Ok(Ok(())) => {}
        }
        loop {
            let line = read_line(&mut self.stdout, settings.max_response_bytes, settings.idle_timeout).await?;
            // Blank lines are no answers and no errors either.
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Ok(line);
            }
        }
    }

    fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// How a process that closed its pipes ended: its exit, or that it is
    /// still running.
    async fn how_it_ended(&mut self) -> String {
        match tokio::time::timeout(GRACE, self.child.wait()).await {
            Ok(Ok(status)) => describe_exit(status),
            Ok(Err(e)) => format!("ended (its exit status is unknown: {e})"),
            Err(_) => "closed its stdin or stdout".to_owned(),
        }
    }

    /// Kills the process and returns the end of its stderr, once it closed
    /// (or the grace ran out: a child of its own may hold it open).
    async fn end(mut self) -> String {
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(GRACE, self.child.wait()).await;
        let _ = tokio::time::timeout(GRACE, &mut self.stderr_reader).await;
        self.stderr.lock().expect("the stderr tail's lock").text()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // The child itself is killed on drop (`kill_on_drop`).
        self.stderr_reader.abort();
    }
}

/// Reads one line of at most `cap` bytes, each read within `idle`.
async fn read_line(stdout: &mut BufReader<ChildStdout>, cap: usize, idle: Duration) -> Result<Vec<u8>, Stop> {
    let mut line = Vec::new();
    loop {
        let buffer = match tokio::time::timeout(idle, stdout.fill_buf()).await {
            Err(_) => return Err(Stop::Silent),
            Ok(Err(_)) => return Err(Stop::Closed),
            Ok(Ok([])) => return Err(Stop::Closed),
            Ok(Ok(buffer)) => buffer,
        };
        let (taken, complete) = match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => (end, true),
            None => (buffer.len(), false),
        };
        if line.len() + taken > cap {
            return Err(Stop::TooLarge);
        }
        line.extend_from_slice(&buffer[..taken]);
        stdout.consume(if complete { taken + 1 } else { taken });
        if complete {
            return Ok(line);
        }
    }
}

/// The last bytes a process wrote to stderr (a suite's setup command
/// keeps its own the same way).
#[derive(Default)]
pub(crate) struct StderrTail {
    bytes: Vec<u8>,
    cut: bool,
}

impl StderrTail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        // Trimmed in batches, so that keeping the tail costs no more than
        // reading it.
        if self.bytes.len() > 2 * STDERR_TAIL_BYTES {
            self.bytes.drain(..self.bytes.len() - STDERR_TAIL_BYTES);
            self.cut = true;
        }
    }

    /// The last [`STDERR_TAIL_BYTES`], as text (URL credentials removed).
    pub(crate) fn text(&self) -> String {
        let start = self.bytes.len().saturating_sub(STDERR_TAIL_BYTES);
        let text = String::from_utf8_lossy(&self.bytes[start..]);
        let text = redact_urls(text.trim()).into_owned();
        if (self.cut || start > 0) && !text.is_empty() { format!("…{text}") } else { text }
    }
}

/// Reads a process's stderr until it closes, keeping its tail.
pub(crate) async fn keep_stderr_tail(mut stderr: ChildStderr, tail: Arc<Mutex<StderrTail>>) {
    let mut buffer = vec![0; 8 << 10];
    while let Ok(read @ 1..) = stderr.read(&mut buffer).await {
        tail.lock().expect("the stderr tail's lock").push(&buffer[..read]);
    }
}

/// The request, as one line.
fn request_line(request: &ChatRequest) -> Vec<u8> {
    let metadata: Map<String, Value> =
        request.metadata.iter().map(|(name, value)| (name.clone(), Value::String(value.clone()))).collect();
    let sample = request.sample();
    let mut line = serde_json::to_vec(&json!({
        "agent": request.agent,
        "text": request.text,
        "sly_data": request.sly_data,
        "chat_context": request.chat_context,
        "chat_filter": request.chat_filter.name(),
        "metadata": metadata,
        "sample": sample,
    }))
    .expect("JSON values serialize");
    line.push(b'\n');
    line
}

/// One answer line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    text: Option<String>,
    structure: Option<Map<String, Value>>,
    sly_data: Option<Map<String, Value>>,
    chat_context: Option<Value>,
    usage: Option<AnswerUsage>,
    error: Option<String>,
}

/// An answer's `usage`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
}

/// Reads an answer line: the response, the agent's refusal, or what makes
/// the line malformed.
fn parse_answer(line: &[u8]) -> Result<Result<AgentResponse, AgentErrorKind>, ProcessFault> {
    let answer: Answer = serde_json::from_slice(line).map_err(|e| {
        let preview: String = String::from_utf8_lossy(line).chars().take(80).collect();
        ProcessFault::Malformed(format!("{e} in `{preview}`"))
    })?;
    if let Some(error) = answer.error {
        return Ok(Err(AgentErrorKind::Refused(error)));
    }
    let message = ChatMessage {
        message_type: "AI".into(),
        text: answer.text,
        structure: answer.structure,
        sly_data: answer.sly_data,
        chat_context: answer.chat_context,
        origin: Vec::new(),
    };
    let mut response = reduce_keeping_text(vec![message]);
    response.usage =
        answer.usage.map(|u| Usage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens });
    Ok(Ok(response))
}

/// `exited with status 3`, `was killed by signal 9`.
pub(crate) fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return format!("was killed by signal {signal}");
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("ended ({status})"),
    }
}

/// The command as a shell would take it.
pub(crate) fn shown_command(command: &[String]) -> String {
    let quoted = command.iter().map(|word| {
        let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
        if plain { word.clone() } else { format!("'{}'", word.replace('\'', r"'\''")) }
    });
    quoted.collect::<Vec<_>>().join(" ")
}

fn is_variable_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::ChatFilter;

    #[test]
    fn a_request_is_one_line_with_every_field() {
        let request = ChatRequest {
            agent: "orders".into(),
            text: "two\nlines".into(),
            sly_data: Some(json!({"user": "ann"}).as_object().cloned().unwrap()),
            chat_context: None,
            chat_filter: ChatFilter::Maximal,
            metadata: vec![("x-assay-sample".into(), "2".into()), ("x-team".into(), "qa".into())],
        };
        let line = request_line(&request);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            value,
            json!({"agent": "orders", "text": "two\nlines", "sly_data": {"user": "ann"}, "chat_context": null,
                   "chat_filter": "MAXIMAL", "metadata": {"x-assay-sample": "2", "x-team": "qa"}, "sample": 2})
        );
    }

    #[test]
    fn an_answer_line_becomes_a_response_or_a_refusal_or_a_fault() {
        let response = parse_answer(
            br#"{"text": "hi {\"a\": 1}", "chat_context": [1], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}"#,
        )
        .unwrap()
        .unwrap();
        // The text whole, its JSON object the structure too.
        assert_eq!(response.text.as_deref(), Some(r#"hi {"a": 1}"#));
        assert_eq!(response.structure, json!({"a": 1}).as_object().cloned());
        assert_eq!(response.chat_context, Some(json!([1])));
        assert_eq!(response.usage, Some(Usage { prompt_tokens: 3, completion_tokens: 2 }));
        assert_eq!(parse_answer(br#"{"error": "no"}"#).unwrap(), Err(AgentErrorKind::Refused("no".into())));
        let ProcessFault::Malformed(cause) = parse_answer(br#"{"txt": "hi"}"#).unwrap_err() else { panic!() };
        assert!(cause.starts_with("unknown field `txt`, expected one of `text`"), "{cause}");
    }

    #[test]
    fn the_stderr_tail_keeps_the_last_bytes() {
        let mut tail = StderrTail::default();
        tail.push(b"start\n");
        assert_eq!(tail.text(), "start");
        for i in 0..1000 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        let text = tail.text();
        assert!(text.starts_with('…') && text.ends_with("line 999"), "{text}");
        assert!(text.len() <= STDERR_TAIL_BYTES + '…'.len_utf8());
    }

    #[test]
    fn the_process_gets_the_listed_variables_and_a_path() {
        let lookup = |name: &str| ["KEY", "PATH"].contains(&name).then(|| OsString::from(format!("{name} value")));
        let pairs = |list: &[(&str, &str)]| -> Vec<(OsString, OsString)> {
            list.iter().map(|&(name, value)| (name.into(), value.into())).collect()
        };
        let listed = ["KEY", "UNSET"].map(String::from);
        assert_eq!(environment(&listed, lookup), pairs(&[("KEY", "KEY value"), ("PATH", MINIMAL_PATH)]));
        let listed = ["PATH", "KEY"].map(String::from);
        assert_eq!(environment(&listed, lookup), pairs(&[("PATH", "PATH value"), ("KEY", "KEY value")]));
        assert_eq!(environment(&[], lookup), pairs(&[("PATH", MINIMAL_PATH)]));
    }

    #[test]
    fn the_command_is_shown_as_a_shell_would_take_it() {
        let command = ["python3", "agent.py", "--name", "two words", "it's"].map(String::from);
        assert_eq!(shown_command(&command), r"python3 agent.py --name 'two words' 'it'\''s'");
    }
}
