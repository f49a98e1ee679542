//! The `exec` connection: promptfoo's `exec:` provider. Each request
//! starts the program once, with the turn's text as an argument after the
//! command's own (then promptfoo's options and context objects, as JSON),
//! and its stdout, trimmed and stripped of ANSI escapes, is the answer. A
//! non-zero exit, or an empty stdout with something on stderr, is an
//! error naming the program and the tail of its stderr.
//!
//! The process runs in the folder given, with no environment but a
//! minimal `PATH` (promptfoo passes its whole environment; assay keeps
//! secrets out of programs that do not ask for them, as the `command`
//! connection does), and is killed when the request is cancelled.

use crate::agent::message::{ChatMessage, ChatRequest};
use crate::agent::reduce::AgentResponse;
use crate::agent::transport::command::{MINIMAL_PATH, shown_command};
use crate::agent::transport::{Reply, Transport};
use crate::errors::{AgentErrorKind, ProcessFault};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::AsyncReadExt;

/// The most stdout an answer may have, and the stderr kept for errors.
const MAX_STDOUT_BYTES: u64 = 16 << 20;
const STDERR_TAIL_BYTES: usize = 2 << 10;

/// A program started once per request.
#[derive(Debug)]
pub struct ExecAgents {
    /// The program and its arguments.
    command: Vec<String>,
    /// The options object passed after the prompt, as JSON.
    options: String,
    /// Where it runs.
    dir: PathBuf,
    shown: String,
}

impl ExecAgents {
    /// The program `command` (a bare name found in [`MINIMAL_PATH`], a
    /// relative path from `dir`), given `options` (JSON) after each prompt.
    pub fn new(command: Vec<String>, options: String, dir: PathBuf) -> Result<ExecAgents, String> {
        if command.is_empty() {
            return Err("the command is empty".into());
        }
        let shown = shown_command(&command);
        // Absolute, so that the folder of a config named without one
        // (`promptfooconfig.yaml`: the folder `""`) is the current one, and
        // a program named by a path is found from it whatever the child's
        // folder.
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        let dir = std::path::absolute(&dir).map_err(|e| format!("its folder `{}`: {e}", dir.display()))?;
        Ok(ExecAgents { command, options, dir, shown })
    }

    async fn ask(&self, request: &ChatRequest) -> Result<AgentResponse, AgentErrorKind> {
        let fault = |fault: ProcessFault, stderr: String| AgentErrorKind::Process { fault, stderr };
        let program = &self.command[0];
        let program = if program.contains('/') { self.dir.join(program) } else { PathBuf::from(program) };
        let mut child = tokio::process::Command::new(&program)
            .args(&self.command[1..])
            .arg(&request.text)
            .arg(&self.options)
            .arg("{}")
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", MINIMAL_PATH)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| fault(ProcessFault::Start(format!("`{}`: {e}", program.display())), String::new()))?;
        let (mut stdout, mut stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            (&mut stdout).take(MAX_STDOUT_BYTES + 1).read_to_end(&mut out).await?;
            Ok::<_, std::io::Error>(())
        };
        let read_err = async {
            (&mut stderr).take(MAX_STDOUT_BYTES).read_to_end(&mut err).await?;
            Ok::<_, std::io::Error>(())
        };
        let (read_out, read_err) = tokio::join!(read_out, read_err);
        let status = child.wait().await;
        let tail = String::from_utf8_lossy(&err[err.len().saturating_sub(STDERR_TAIL_BYTES)..]).into_owned();
        if out.len() as u64 > MAX_STDOUT_BYTES {
            return Err(fault(ProcessFault::TooLarge(MAX_STDOUT_BYTES as usize), tail));
        }
        if let Err(e) = read_out.and(read_err) {
            return Err(fault(ProcessFault::Exited(format!("could not be read ({e})")), tail));
        }
        match status {
            Ok(status) if status.success() => {}
            Ok(status) => return Err(fault(ProcessFault::Exited(crate::agent::describe_exit(status)), tail)),
            Err(e) => return Err(fault(ProcessFault::Exited(format!("could not be waited for ({e})")), tail)),
        }
        let text = strip_ansi(String::from_utf8_lossy(&out).trim());
        if text.is_empty() && !tail.trim().is_empty() {
            return Err(fault(ProcessFault::Malformed("it wrote nothing on stdout".into()), tail));
        }
        let message = ChatMessage {
            message_type: "AI".into(),
            text: Some(text.clone()),
            structure: None,
            sly_data: None,
            chat_context: None,
            origin: Vec::new(),
        };
        // The answer is the program's text as it is: never read as a
        // structure.
        let response = AgentResponse {
            text: Some(text),
            structure: None,
            sly_data: None,
            chat_context: None,
            messages: vec![message],
            usage: None,
            cost: None,
            text_is_json: false,
        };
        Ok(response)
    }
}

/// `text` without ANSI escape sequences (promptfoo's `stripText`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        if chars.next() == Some('[') {
            // Parameters and intermediates, then one final byte.
            while let Some(&next) = chars.peek() {
                chars.next();
                if ('@'..='~').contains(&next) {
                    break;
                }
            }
        }
    }
    out
}

impl Transport for ExecAgents {
    fn endpoint(&self, _agent: &str) -> String {
        format!("exec:{}", self.shown)
    }

    fn chat<'a>(&'a self, request: &'a ChatRequest) -> Reply<'a> {
        Box::pin(self.ask(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_escapes_are_stripped() {
        assert_eq!(strip_ansi("\x1b[1;31mred\x1b[0m text"), "red text");
    }
}
