//! The typed model of a neuro-san data-driven test case, as the seed
//! document `docs/test_case_hocon_reference.md` specifies it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// One test case: a conversation with an agent and the checks on each
/// response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TestCase {
    /// A stable name: the file's path relative to the folder it was found
    /// in, without the `.hocon` extension (e.g. `math_guy/basic_sly_data`).
    pub id: String,
    /// The file it was read from.
    pub file: PathBuf,
    /// The agent's name (the stem of its network file), e.g. `math_guy`.
    pub agent: String,
    /// The connections to test over, each from a fresh conversation
    /// (default `[direct]`).
    pub connections: Vec<Connection>,
    /// How many of how many samples must pass (default 1/1).
    pub success_ratio: SuccessRatio,
    /// neuro-san's `use_direct`: how the agent calls external agents.
    pub use_direct: bool,
    /// Request metadata, sent as HTTP headers on every request.
    pub metadata: Vec<(String, String)>,
    /// The bound on one sample (all its interactions).
    #[serde(serialize_with = "serialize_seconds")]
    pub timeout: Option<Duration>,
    /// The conversation, in order.
    pub interactions: Vec<Interaction>,
    /// Where the file's keys are, for naming a failing check's line.
    #[serde(skip)]
    pub key_lines: super::KeyLines,
}

/// One turn: what to send, and what to check on the answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interaction {
    /// The user message.
    pub text: Option<String>,
    /// Private data sent with the message (a JSON object).
    pub sly_data: Option<Map<String, Value>>,
    /// The bound on this one request.
    #[serde(serialize_with = "serialize_seconds")]
    pub timeout: Option<Duration>,
    /// How much the server should send back (default MINIMAL).
    pub chat_filter: ChatFilter,
    /// Whether this turn continues the conversation (default true).
    pub continue_conversation: bool,
    /// The `response` block as written: `text`, `sly_data` and `structure`
    /// test dictionaries. The check planner turns it into checks.
    pub response: Map<String, Value>,
}

/// How the test driver reaches the agent: a built-in connection, or one
/// configured by name in `assay.toml` (`[connections.NAME]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Connection {
    /// In-process: a sandboxed agent component, no server.
    Direct,
    /// A neuro-san server over HTTP.
    Http,
    /// A neuro-san server over HTTPS.
    Https,
    /// neuro-san's older gRPC service. Not in the specification, but older
    /// test files use it, so it is read; running over it is an error verdict
    /// that suggests `http` instead.
    Grpc,
    /// No agent: each turn's recorded answer is replayed (the mock
    /// responses of `assay validate`). Not a name a test case file can use.
    Replay,
    /// A connection configured in `assay.toml` as `[connections.NAME]`
    /// (OpenAI-compatible chat, any HTTP API, a local command, a neuro-san
    /// server), by its name.
    Named(Arc<str>),
}

impl Connection {
    /// The built-in connections a case file may name: the seed document's
    /// three, then gRPC.
    pub const BUILT_IN: [Connection; 4] = [Connection::Direct, Connection::Http, Connection::Https, Connection::Grpc];

    /// The connection a case file or flag names: a built-in one by its name
    /// (any case), else the configured one of that name. `None` when the
    /// text cannot name a connection (empty, or other than letters, digits,
    /// `_` and `-`).
    pub fn from_name(name: &str) -> Option<Connection> {
        let lowercase = name.to_ascii_lowercase();
        if let Some(built_in) = Connection::BUILT_IN.into_iter().find(|c| c.name() == lowercase) {
            return Some(built_in);
        }
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        valid.then(|| Connection::Named(Arc::from(name)))
    }

    /// The name as written in test files.
    pub fn name(&self) -> &str {
        match self {
            Connection::Direct => "direct",
            Connection::Http => "http",
            Connection::Https => "https",
            Connection::Grpc => "grpc",
            Connection::Replay => "replay",
            Connection::Named(name) => name,
        }
    }

    /// Whether a request over it is answered in this process (an agent
    /// component, a replayed answer): CPU work, no network.
    pub fn is_in_process(&self) -> bool {
        matches!(self, Connection::Direct | Connection::Replay)
    }
}

impl fmt::Display for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Connection {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Read back from results: any name a case may use, `replay`, and the
/// names the run gave the connections it made itself (a promptfoo
/// provider's `promptfoo:CONFIG:N`, which no case file may write).
impl<'de> Deserialize<'de> for Connection {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Connection, D::Error> {
        let name = String::deserialize(deserializer)?;
        if name == Connection::Replay.name() {
            return Ok(Connection::Replay);
        }
        match Connection::from_name(&name) {
            Some(connection) => Ok(connection),
            None if !name.is_empty() => Ok(Connection::Named(Arc::from(name))),
            None => Err(serde::de::Error::custom("a connection's name is empty")),
        }
    }
}

/// neuro-san's chat filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ChatFilter {
    /// The answer and what continues the conversation.
    #[default]
    Minimal,
    /// Every message, for debugging.
    Maximal,
}

impl ChatFilter {
    /// The name as written in test files and sent on the wire.
    pub fn name(self) -> &'static str {
        match self {
            ChatFilter::Minimal => "MINIMAL",
            ChatFilter::Maximal => "MAXIMAL",
        }
    }
}

/// `success_ratio "k/n"`: at least `required` of `samples` samples must
/// pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuccessRatio {
    /// k: how many samples must pass (1 ≤ k ≤ n).
    pub required: u32,
    /// n: how many samples to run.
    pub samples: u32,
}

impl Default for SuccessRatio {
    fn default() -> Self {
        SuccessRatio { required: 1, samples: 1 }
    }
}

impl fmt::Display for SuccessRatio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.required, self.samples)
    }
}

impl Serialize for SuccessRatio {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Read back from results as `"k/n"`.
impl<'de> Deserialize<'de> for SuccessRatio {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<SuccessRatio, D::Error> {
        SuccessRatio::parse(&String::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl SuccessRatio {
    /// Parses `"k/n"`: two positive integers with k ≤ n.
    pub fn parse(text: &str) -> Result<SuccessRatio, String> {
        let (k, n) =
            text.split_once('/').ok_or_else(|| format!("`{text}` is not of the form \"k/n\" (e.g. \"3/5\")"))?;
        let parse = |part: &str, what: &str| -> Result<u32, String> {
            part.trim().parse::<u32>().map_err(|_| format!("`{text}`: the {what} `{part}` is not a whole number"))
        };
        let (required, samples) = (parse(k, "numerator")?, parse(n, "denominator")?);
        if samples == 0 {
            return Err(format!("`{text}`: the denominator (the number of samples) must be at least 1"));
        }
        if required == 0 {
            return Err(format!("`{text}`: the numerator must be at least 1, or the case could never fail"));
        }
        if required > samples {
            return Err(format!("`{text}`: {required} passing samples out of {samples} can never happen"));
        }
        Ok(SuccessRatio { required, samples })
    }

    /// Whether the outcome is settled with `passed` samples passed and at
    /// most `possible` more that could still pass: `k` reached, or out of
    /// reach.
    pub fn is_decided(&self, passed: u32, possible: u32) -> bool {
        passed >= self.required || passed + possible < self.required
    }
}

fn serialize_seconds<S: serde::Serializer>(value: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(duration) => serializer.serialize_f64(duration.as_secs_f64()),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_success_ratio_is_decided_when_k_is_reached_or_out_of_reach() {
        let ratio = SuccessRatio { required: 2, samples: 5 };
        assert!(ratio.is_decided(2, 3));
        assert!(ratio.is_decided(0, 1));
        assert!(ratio.is_decided(1, 0));
        assert!(!ratio.is_decided(1, 1));
        assert!(!ratio.is_decided(0, 2));
    }

    #[test]
    fn success_ratio_parses_and_rejects_with_reasons() {
        assert_eq!(SuccessRatio::parse("3/5"), Ok(SuccessRatio { required: 3, samples: 5 }));
        assert_eq!(SuccessRatio::parse(" 1 / 1 "), Ok(SuccessRatio { required: 1, samples: 1 }));
        assert_eq!(SuccessRatio::parse("3/2").unwrap_err(), "`3/2`: 3 passing samples out of 2 can never happen");
        assert_eq!(SuccessRatio::parse("a/b").unwrap_err(), "`a/b`: the numerator `a` is not a whole number");
        assert_eq!(
            SuccessRatio::parse("0/0").unwrap_err(),
            "`0/0`: the denominator (the number of samples) must be at least 1"
        );
        assert_eq!(
            SuccessRatio::parse("0/3").unwrap_err(),
            "`0/3`: the numerator must be at least 1, or the case could never fail"
        );
        assert_eq!(SuccessRatio::parse("5").unwrap_err(), "`5` is not of the form \"k/n\" (e.g. \"3/5\")");
        assert_eq!(SuccessRatio::parse("-1/2").unwrap_err(), "`-1/2`: the numerator `-1` is not a whole number");
    }
}
