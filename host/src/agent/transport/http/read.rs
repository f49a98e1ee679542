//! Reading a response into JSON values, as the connection's `response`
//! says: one `json` body, `json-lines` (a value per line) or `sse`
//! (server-sent events, a value per event's `data`). The body is read
//! chunk by chunk under a size cap and an idle timeout, and split as it
//! arrives, so a stream is never held twice.

use crate::agent::transport::http::extract::Unit;
use crate::errors::AgentErrorKind;
use crate::net::error_chain;
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;

/// The kinds of `response`.
pub(crate) const FORMATS: &[&str] = &["json", "json-lines", "sse"];

/// How a response is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// One JSON value, the whole body.
    Json,
    /// One JSON value per line; blank lines are skipped.
    JsonLines,
    /// Server-sent events: each event's `data` (its `data:` lines joined
    /// by newlines) is one JSON value; comments, other fields and a
    /// `[DONE]` event are skipped.
    Sse,
}

impl Format {
    /// Reads `response = "…"` (default `json`).
    pub(crate) fn parse(written: Option<&str>) -> Result<Format, String> {
        match written {
            None | Some("json") => Ok(Format::Json),
            Some("json-lines") => Ok(Format::JsonLines),
            Some("sse") => Ok(Format::Sse),
            Some(other) => {
                let hint = crate::suggest::nearest(other, FORMATS.iter().copied())
                    .map(|near| format!(" (did you mean `{near}`?)"))
                    .unwrap_or_default();
                Err(format!(
                    "`response = \"{other}\"` is no way of reading a response{hint}; the ways are json, json-lines, sse"
                ))
            }
        }
    }

    /// What its values come as, for messages.
    pub(crate) fn unit(self) -> Unit {
        match self {
            Format::Json => Unit::Body,
            Format::JsonLines => Unit::Line,
            Format::Sse => Unit::Event,
        }
    }
}

/// The caps on reading one response.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Caps {
    /// The most bytes read.
    pub max_bytes: usize,
    /// The longest silence.
    pub idle: Duration,
}

/// Reads the body of `response` as `format`.
pub(crate) async fn read(
    response: reqwest::Response,
    format: Format,
    caps: Caps,
) -> Result<Vec<Value>, AgentErrorKind> {
    if response.content_length().is_some_and(|length| length > caps.max_bytes as u64) {
        return Err(AgentErrorKind::TooLarge(caps.max_bytes));
    }
    let mut decoder = Decoder::new(format);
    let mut stream = response.bytes_stream();
    let mut received = 0usize;
    loop {
        let chunk = match tokio::time::timeout(caps.idle, stream.next()).await {
            Err(_) => return Err(AgentErrorKind::Stalled(caps.idle)),
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(AgentErrorKind::Truncated(error_chain(&e.without_url()))),
            Ok(Some(Ok(chunk))) => chunk,
        };
        received += chunk.len();
        if received > caps.max_bytes {
            return Err(AgentErrorKind::TooLarge(caps.max_bytes));
        }
        decoder.push(&chunk)?;
    }
    decoder.finish()
}

/// Turns the bytes of a body, as they arrive, into JSON values.
#[derive(Debug)]
pub(crate) struct Decoder {
    format: Format,
    /// Bytes not yet decoded: the whole body for `json`, the unfinished
    /// line for the streams.
    pending: Vec<u8>,
    /// Lines so far (json-lines) or events so far (sse), 1-based in
    /// messages.
    count: usize,
    /// The `data` of the event being read (sse).
    data: Option<String>,
    values: Vec<Value>,
}

impl Decoder {
    /// A decoder for `format`.
    pub(crate) fn new(format: Format) -> Decoder {
        Decoder { format, pending: Vec::new(), count: 0, data: None, values: Vec::new() }
    }

    /// Takes the next bytes.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), AgentErrorKind> {
        // Only the new bytes are searched for line ends: a long line is
        // scanned once, not once per chunk.
        let mut unscanned = self.pending.len();
        self.pending.extend_from_slice(bytes);
        if self.format == Format::Json {
            return Ok(()); // A body is read whole, at the end.
        }
        while let Some(offset) = self.pending[unscanned..].iter().position(|&b| b == b'\n') {
            let end = unscanned + offset;
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            unscanned = 0;
            let line = trim_line_end(&line[..end]);
            match self.format {
                Format::Sse => self.sse_line(line)?,
                Format::JsonLines | Format::Json => self.json_line(line)?,
            }
        }
        Ok(())
    }

    /// The values, once the body has ended: an error if it ended in the
    /// middle of one.
    pub(crate) fn finish(mut self) -> Result<Vec<Value>, AgentErrorKind> {
        let rest = std::mem::take(&mut self.pending);
        match self.format {
            Format::Json => {
                if rest.iter().all(u8::is_ascii_whitespace) {
                    return Err(AgentErrorKind::MalformedBody("the body is empty; a JSON value was expected".into()));
                }
                let value = serde_json::from_slice(&rest).map_err(|e| match e.classify() {
                    serde_json::error::Category::Eof => {
                        AgentErrorKind::Truncated("the body ended in the middle of its JSON value".into())
                    }
                    _ => AgentErrorKind::MalformedBody(format!("the body is not JSON: {e} in `{}`", preview(&rest))),
                })?;
                self.values.push(value);
            }
            // A last line without its newline is fine if it is whole.
            Format::JsonLines => {
                self.json_line(trim_line_end(&rest)).map_err(|error| self.cut_off(error, "line"))?;
            }
            // So is a last event without its blank line.
            Format::Sse => {
                if !rest.is_empty() {
                    self.sse_line(trim_line_end(&rest)).map_err(|error| self.cut_off(error, "event"))?;
                }
                self.dispatch().map_err(|error| self.cut_off(error, "event"))?;
            }
        }
        Ok(self.values)
    }

    /// A value that ended early is a cut-off stream, not a malformed one.
    fn cut_off(&self, error: AgentErrorKind, unit: &str) -> AgentErrorKind {
        let ended_early = match &error {
            AgentErrorKind::Malformed { cause, .. } | AgentErrorKind::MalformedBody(cause) => cause.contains("EOF"),
            _ => false,
        };
        if ended_early {
            AgentErrorKind::Truncated(format!("the stream ended in the middle of {unit} {}", self.count.max(1)))
        } else {
            error
        }
    }

    /// One line of JSON lines; blank lines are skipped.
    fn json_line(&mut self, line: &[u8]) -> Result<(), AgentErrorKind> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        self.count += 1;
        let value = serde_json::from_slice(line).map_err(|e| AgentErrorKind::Malformed {
            line: self.count,
            cause: format!("{e} in `{}`", preview(line)),
        })?;
        self.values.push(value);
        Ok(())
    }

    /// One line of server-sent events: a blank one ends an event.
    fn sse_line(&mut self, line: &[u8]) -> Result<(), AgentErrorKind> {
        if line.is_empty() {
            return self.dispatch();
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = line.split_once(':').unwrap_or((&line, ""));
        // Comments (`: …`) and other fields (`event`, `id`, `retry`) say
        // nothing about the answer.
        if field == "data" {
            let value = value.strip_prefix(' ').unwrap_or(value);
            let data = self.data.get_or_insert_default();
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(value);
        }
        Ok(())
    }

    /// Ends the event being read (sse).
    fn dispatch(&mut self) -> Result<(), AgentErrorKind> {
        let Some(data) = self.data.take() else { return Ok(()) };
        self.count += 1;
        // OpenAI-style streams end with a `[DONE]` that is not JSON.
        if data.trim() == "[DONE]" {
            return Ok(());
        }
        let value = serde_json::from_str(&data).map_err(|e| {
            AgentErrorKind::MalformedBody(format!(
                "the data of event {} is not JSON: {e} in `{}`",
                self.count,
                preview(data.as_bytes())
            ))
        })?;
        self.values.push(value);
        Ok(())
    }
}

/// A line without its `\r` (CRLF line ends).
fn trim_line_end(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The start of some bytes, for messages.
fn preview(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Decodes `body` fed in chunks of `size` bytes.
    fn decode(format: Format, body: &str, size: usize) -> Result<Vec<Value>, AgentErrorKind> {
        let mut decoder = Decoder::new(format);
        for chunk in body.as_bytes().chunks(size) {
            decoder.push(chunk)?;
        }
        decoder.finish()
    }

    #[test]
    fn each_format_reads_its_values_however_the_bytes_are_split() {
        let cases = [
            (Format::Json, "{\"a\": [1, 2],\n \"b\": \"x\"}\n", vec![json!({"a": [1, 2], "b": "x"})]),
            (
                Format::JsonLines,
                "{\"d\": \"He\"}\n\n{\"d\": \"llo\"}\r\n{\"done\": true}",
                vec![json!({"d": "He"}), json!({"d": "llo"}), json!({"done": true})],
            ),
            (
                Format::Sse,
                ": keep-alive\r\n\r\nevent: delta\ndata: {\"d\":\ndata:  \"Hé\"}\nid: 1\n\ndata: {\"d\": \"llo\"}\n\ndata: [DONE]\n\n",
                vec![json!({"d": "Hé"}), json!({"d": "llo"})],
            ),
            (Format::Sse, "data: {\"last\": 1}", vec![json!({"last": 1})]),
        ];
        for (format, body, expected) in cases {
            for size in [1, 3, 7, body.len()] {
                assert_eq!(decode(format, body, size).unwrap(), expected, "{format:?} in chunks of {size}");
            }
        }
    }

    #[test]
    fn a_body_that_stops_early_is_cut_off_and_a_bad_one_malformed() {
        let cut = |format, body| decode(format, body, 4).unwrap_err().to_string();
        assert_eq!(
            cut(Format::Json, "{\"answer\": \"th"),
            "the response stream was cut off: the body ended in the middle of its JSON value"
        );
        assert_eq!(
            cut(Format::JsonLines, "{\"a\": 1}\n{\"a\""),
            "the response stream was cut off: the stream ended in the middle of line 2"
        );
        assert_eq!(
            cut(Format::Sse, "data: {\"a\": 1}\n\ndata: {\"a\""),
            "the response stream was cut off: the stream ended in the middle of event 2"
        );
        assert!(
            cut(Format::Json, "<html>oops</html>")
                .starts_with("the response is malformed: the body is not JSON: expected value")
        );
        assert_eq!(cut(Format::Json, " \n"), "the response is malformed: the body is empty; a JSON value was expected");
        assert!(
            cut(Format::JsonLines, "{\"a\": 1}\nnot json\n")
                .starts_with("line 2 of the response stream is malformed: expected")
        );
        assert!(
            cut(Format::Sse, "data: {\"a\": 1}\n\ndata: nope\n\n")
                .starts_with("the response is malformed: the data of event 2 is not JSON")
        );
    }

    #[test]
    fn response_names_its_formats() {
        assert_eq!(Format::parse(None), Ok(Format::Json));
        assert_eq!(Format::parse(Some("sse")), Ok(Format::Sse));
        assert_eq!(
            Format::parse(Some("json-line")).unwrap_err(),
            "`response = \"json-line\"` is no way of reading a response (did you mean `json-lines`?); the ways are json, json-lines, sse"
        );
    }
}
