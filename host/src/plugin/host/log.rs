//! The `log` interface: lines from a plugin, kept per call under a line and
//! byte cap, with overflow counted rather than kept.

use crate::plugin::bindings::matcher::assay::plugin::log::{Host, Level};
use crate::plugin::sandbox::SandboxState;

/// The longest single log line kept, in bytes.
const MAX_LINE_BYTES: usize = 1024;

/// One line a plugin logged.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    /// `trace`, `debug`, `info`, `warn` or `error`.
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
}

impl LogBuffer {
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Self {
        LogBuffer { lines: Vec::new(), bytes: 0, dropped: 0, max_lines, max_bytes }
    }

    pub(crate) fn clear(&mut self) {
        self.lines.clear();
        self.bytes = 0;
        self.dropped = 0;
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

    /// Takes the lines of the last call and how many were dropped by the cap.
    pub(crate) fn take(&mut self) -> (Vec<LogLine>, usize) {
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

impl Host for SandboxState {
    fn emit(&mut self, level: Level, message: String) {
        let level = match level {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        self.log.push(level, message);
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
    fn finds_the_panic_message() {
        let mut log = LogBuffer::new(10, 1000);
        log.push("info", "hello".into());
        log.push("error", "panicked at src/lib.rs:3:5: boom".into());
        assert_eq!(log.panic_message().as_deref(), Some("at src/lib.rs:3:5: boom"));
    }
}
