//! The `log` interface: lines from a plugin, kept per call under a line and
//! byte cap, with overflow counted rather than kept (`LogState`). What a
//! guest writes to WASI stdout and stderr lands here too, line by line
//! (`stdio.rs`), so that a Python plugin's `print` and tracebacks reach its
//! author.

use crate::sandbox::bindings::matcher_0_2::assay::plugin::log::{Host, Level};
use crate::sandbox::bindings::{matcher_0_1, matcher_0_2, matcher_0_3};
use std::sync::{Arc, Mutex, MutexGuard};

/// The longest single log line kept, in bytes.
const MAX_LINE_BYTES: usize = 1024;

/// One line a plugin logged.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    /// `trace`, `debug`, `info`, `warn` or `error`; `stdout` or `stderr` for
    /// what the guest wrote to WASI's standard streams.
    pub level: &'static str,
    /// The text, cut to 1 KiB.
    pub message: String,
}

/// The lines logged during one call.
#[derive(Debug)]
pub struct LogBuffer {
    lines: Vec<LogLine>,
    bytes: usize,
    dropped: usize,
    max_lines: usize,
    max_bytes: usize,
    /// The unfinished last line of stdout and of stderr.
    partial: [Vec<u8>; 2],
}

/// A log shared by a store and the WASI streams that write into it.
pub(crate) type SharedLog = Arc<Mutex<LogBuffer>>;

/// One of the guest's standard output streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout = 0,
    Stderr = 1,
}

impl Stream {
    fn level(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

impl LogBuffer {
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Self {
        LogBuffer { lines: Vec::new(), bytes: 0, dropped: 0, max_lines, max_bytes, partial: [Vec::new(), Vec::new()] }
    }

    pub(crate) fn clear(&mut self) {
        self.lines.clear();
        self.bytes = 0;
        self.dropped = 0;
        self.partial.iter_mut().for_each(Vec::clear);
    }

    /// Takes bytes the guest wrote to `stream`: each finished line becomes a
    /// log line; a line longer than the line cap is cut there and the rest
    /// of it dropped, so a guest cannot make the host hold more than one
    /// line's worth per stream.
    pub(crate) fn write(&mut self, stream: Stream, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (line, rest, finished) = match bytes.iter().position(|&b| b == b'\n') {
                Some(end) => (&bytes[..end], &bytes[end + 1..], true),
                None => (bytes, &[][..], false),
            };
            let partial = &mut self.partial[stream as usize];
            let room = (MAX_LINE_BYTES + 4).saturating_sub(partial.len());
            partial.extend_from_slice(&line[..line.len().min(room)]);
            if finished {
                self.end_line(stream);
            }
            bytes = rest;
        }
    }

    /// Turns the unfinished line of `stream` into a log line.
    fn end_line(&mut self, stream: Stream) {
        let bytes = std::mem::take(&mut self.partial[stream as usize]);
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if text.ends_with('\r') {
            text.pop();
        }
        self.push(stream.level(), text);
    }

    fn push(&mut self, level: &'static str, mut message: String) {
        if self.lines.len() >= self.max_lines || self.bytes >= self.max_bytes {
            self.dropped += 1;
            return;
        }
        truncate_at_char(&mut message, MAX_LINE_BYTES.min(self.max_bytes - self.bytes));
        self.bytes += message.len();
        self.lines.push(LogLine { level, message });
    }

    /// Takes the lines of the last call (an unfinished line of output
    /// included) and how many were dropped by the cap.
    pub(crate) fn take(&mut self) -> (Vec<LogLine>, usize) {
        for stream in [Stream::Stdout, Stream::Stderr] {
            if !self.partial[stream as usize].is_empty() {
                self.end_line(stream);
            }
        }
        let dropped = std::mem::take(&mut self.dropped);
        self.bytes = 0;
        (std::mem::take(&mut self.lines), dropped)
    }

    /// The panic message the SDK's panic hook logged, if any.
    pub(crate) fn panic_message(&self) -> Option<String> {
        self.lines.iter().rev().find_map(|line| line.message.strip_prefix("panicked at ").map(|m| format!("at {m}")))
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary.
pub(crate) fn truncate_at_char(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    true
}

/// One store's log: what the `log` interface and the guest's standard
/// streams write during a call, and what the host takes after it.
#[derive(Debug)]
pub(crate) struct LogState {
    shared: SharedLog,
}

impl LogState {
    /// An empty log keeping at most `max_lines` lines and `max_bytes` bytes
    /// per call.
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Self {
        LogState { shared: Arc::new(Mutex::new(LogBuffer::new(max_lines, max_bytes))) }
    }

    /// The buffer, shared with the guest's standard streams.
    pub(crate) fn shared(&self) -> &SharedLog {
        &self.shared
    }

    /// The buffer, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, LogBuffer> {
        self.shared.lock().expect("the log is never poisoned")
    }
}

impl Host for LogState {
    fn emit(&mut self, level: Level, message: String) {
        let level = match level {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        self.lock().push(level, message);
    }
}

/// `log` is the same in 0.3.0 as in 0.2.0: the same five levels.
impl matcher_0_3::assay::plugin::log::Host for LogState {
    fn emit(&mut self, level: matcher_0_3::assay::plugin::log::Level, message: String) {
        use matcher_0_3::assay::plugin::log::Level as V0_3;
        let level = match level {
            V0_3::Trace => Level::Trace,
            V0_3::Debug => Level::Debug,
            V0_3::Info => Level::Info,
            V0_3::Warn => Level::Warn,
            V0_3::Error => Level::Error,
        };
        matcher_0_2::assay::plugin::log::Host::emit(self, level, message);
    }
}

/// `log` is the same in 0.1.0 as in 0.2.0: the same five levels.
impl matcher_0_1::assay::plugin::log::Host for LogState {
    fn emit(&mut self, level: matcher_0_1::assay::plugin::log::Level, message: String) {
        use matcher_0_1::assay::plugin::log::Level as V0_1;
        let level = match level {
            V0_1::Trace => Level::Trace,
            V0_1::Debug => Level::Debug,
            V0_1::Info => Level::Info,
            V0_1::Warn => Level::Warn,
            V0_1::Error => Level::Error,
        };
        matcher_0_2::assay::plugin::log::Host::emit(self, level, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_lines_and_bytes_and_counts_the_rest() {
        let mut log = LogBuffer::new(3, 1 << 20);
        for i in 0..5 {
            log.push("info", format!("line {i}"));
        }
        let (lines, dropped) = log.take();
        assert_eq!(lines.len(), 3);
        assert_eq!(dropped, 2);

        let mut log = LogBuffer::new(100, 10);
        log.push("info", "ééééééé".into());
        log.push("info", "more".into());
        let (lines, dropped) = log.take();
        assert_eq!(lines[0].message, "ééééé");
        assert_eq!(dropped, 1);
    }

    #[test]
    fn output_becomes_lines_and_long_lines_are_cut() {
        let mut log = LogBuffer::new(10, 1 << 20);
        log.write(Stream::Stdout, b"hel");
        log.write(Stream::Stderr, b"oops\r\n");
        log.write(Stream::Stdout, b"lo\nwor");
        log.write(Stream::Stdout, &vec![b'x'; 10_000]);
        let (lines, dropped) = log.take();
        let seen: Vec<(&str, usize)> = lines.iter().map(|l| (l.level, l.message.len())).collect();
        assert_eq!(seen, [("stderr", 4), ("stdout", 5), ("stdout", MAX_LINE_BYTES)]);
        assert_eq!(lines[0].message, "oops");
        assert_eq!(lines[1].message, "hello");
        assert!(lines[2].message.starts_with("worxxx"));
        assert_eq!(dropped, 0);
        // Nothing is left over for the next call.
        assert_eq!(log.take().0, []);
    }

    #[test]
    fn the_log_interface_and_the_standard_streams_share_one_capped_log() {
        let mut state = LogState::new(3, 1 << 20);
        state.emit(Level::Warn, "careful".into());
        state.lock().write(Stream::Stdout, b"printed\n");
        // A 0.1.0 guest's line lands in the same log.
        let trace = matcher_0_1::assay::plugin::log::Level::Trace;
        matcher_0_1::assay::plugin::log::Host::emit(&mut state, trace, "one".into());
        state.emit(Level::Error, "two".into());
        let (lines, dropped) = state.lock().take();
        let seen: Vec<(&str, &str)> = lines.iter().map(|l| (l.level, l.message.as_str())).collect();
        assert_eq!(seen, [("warn", "careful"), ("stdout", "printed"), ("trace", "one")]);
        assert_eq!(dropped, 1);
    }

    #[test]
    fn finds_the_panic_message() {
        let mut log = LogBuffer::new(10, 1000);
        log.push("info", "hello".into());
        log.push("error", "panicked at src/lib.rs:3:5: boom".into());
        assert_eq!(log.panic_message().as_deref(), Some("at src/lib.rs:3:5: boom"));
    }
}
