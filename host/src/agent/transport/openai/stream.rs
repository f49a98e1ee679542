//! Server-sent events, read incrementally: the framing of a streamed chat
//! completion (`data: {chunk}` events, then `data: [DONE]`), as the
//! WHATWG HTML standard defines event streams. Bytes go in as they arrive;
//! each event's data comes out once its blank line has.
//!
//! Stricter than a browser on one point: a line that is no field of the
//! format (not `data:`, `event:`, `id:`, `retry:` or a `:` comment) is an
//! error naming its line, so that a server answering something else (JSON
//! lines, say) is told apart from one that was cut off.

use crate::errors::AgentErrorKind;

/// One event's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    /// The line its data began on, 1-based.
    pub line: usize,
    /// Its `data:` lines, joined by newlines.
    pub data: String,
}

/// The reader's state between chunks.
#[derive(Debug, Default)]
pub(crate) struct EventStream {
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    /// Lines read.
    lines: usize,
    /// The data of the event being read, and its first line.
    data: Option<(usize, String)>,
}

impl EventStream {
    /// Reads `bytes`, the next part of the stream: the events they
    /// complete.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Event>, AgentErrorKind> {
        let mut events = Vec::new();
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            self.lines += 1;
            let line = line[..end].strip_suffix(b"\r").unwrap_or(&line[..end]);
            if let Some(event) = self.line(line)? {
                events.push(event);
            }
        }
        Ok(events)
    }

    /// Where the stream stopped, if in the middle of a line or of an
    /// event.
    pub(crate) fn unfinished(&self) -> Option<String> {
        if !self.partial.is_empty() {
            return Some(format!("the event stream ended in the middle of line {}", self.lines + 1));
        }
        let (line, _) = self.data.as_ref()?;
        Some(format!("the event stream ended before the end of the event at line {line}"))
    }

    fn line(&mut self, line: &[u8]) -> Result<Option<Event>, AgentErrorKind> {
        let number = self.lines;
        if line.is_empty() {
            return Ok(self.data.take().map(|(line, data)| Event { line, data }));
        }
        let text = std::str::from_utf8(line)
            .map_err(|e| AgentErrorKind::Malformed { line: number, cause: format!("it is not UTF-8 ({e})") })?;
        if text.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = text.split_once(':').unwrap_or((text, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => match &mut self.data {
                Some((_, data)) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some((number, value.to_owned())),
            },
            "event" | "id" | "retry" => {}
            _ => {
                let preview: String = text.chars().take(80).collect();
                let cause = format!("`{preview}` is not a server-sent event line (`data: …`)");
                return Err(AgentErrorKind::Malformed { line: number, cause });
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: usize, data: &str) -> Event {
        Event { line, data: data.into() }
    }

    #[test]
    fn events_come_out_whole_however_the_bytes_are_cut() {
        let text = b": keep-alive\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: [DONE]\n\n";
        let whole = EventStream::default().feed(text).unwrap();
        assert_eq!(whole, vec![event(3, "{\"a\":\n1}"), event(6, "[DONE]")]);
        for cut in 1..text.len() {
            let mut stream = EventStream::default();
            let mut events = stream.feed(&text[..cut]).unwrap();
            events.extend(stream.feed(&text[cut..]).unwrap());
            assert_eq!(events, whole, "cut at {cut}");
            assert_eq!(stream.unfinished(), None);
        }
    }

    #[test]
    fn a_line_of_another_format_is_malformed_and_a_cut_is_seen() {
        let error = EventStream::default().feed(b"data: {}\n\n{\"response\": {}}\n").unwrap_err();
        assert!(matches!(error, AgentErrorKind::Malformed { line: 3, .. }), "{error:?}");
        let mut stream = EventStream::default();
        assert_eq!(stream.feed(b"data: {}\n\ndata: {\"choi").unwrap(), vec![event(1, "{}")]);
        assert_eq!(stream.unfinished().unwrap(), "the event stream ended in the middle of line 3");
        assert_eq!(stream.feed(b"ces\": []}\n").unwrap(), vec![]);
        assert_eq!(stream.unfinished().unwrap(), "the event stream ended before the end of the event at line 3");
    }
}
