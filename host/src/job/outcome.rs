//! What a run produces: one [`CaseResult`] per test case, holding its
//! samples, each sample's runs over each connection, each interaction's
//! checks. These are the lines of `results.jsonl`.

use crate::agent::{AgentResponse, ChatMessage, Usage};
use crate::case::{ChatFilter, Connection, SuccessRatio};
use crate::check::{CheckResult, Outcome, actual_preview};
use crate::plugin::PluginLog;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::path::PathBuf;

/// The file of a run's results, one [`CaseResult`] a line, in its results
/// directory.
pub const RESULTS_FILE: &str = "results.jsonl";

/// The longest line of `results.jsonl` assay writes (64 MiB): a case whose
/// line would be longer is written without its samples, saying so, and a
/// replay refuses a longer line (a `results.jsonl` that is a link to
/// `/dev/zero` has no end of line).
pub const MAX_RESULT_LINE_BYTES: usize = 64 << 20;

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseStatus {
    /// Enough samples passed, and none failed.
    Passed,
    /// Enough samples passed, but some failed.
    Flaky,
    /// Too few samples passed, and some check failed.
    Failed,
    /// Too few samples passed and only errors were to blame (agent down,
    /// timeout, plugin fault), or the file could not be read or planned.
    Error,
}

impl CaseStatus {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            CaseStatus::Passed => "passed",
            CaseStatus::Flaky => "flaky",
            CaseStatus::Failed => "failed",
            CaseStatus::Error => "error",
        }
    }
}

/// An error that is not a check's verdict: a bad file, an agent that
/// failed, a timeout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunError {
    /// Why: `bad-file`, `unreachable`, `interaction-timeout`, ...
    pub kind: crate::errors::ErrorKind,
    /// What happened, naming the file, agent, URL or limit.
    pub message: String,
}

/// The outcome of one test case. It reads back from a line of
/// `results.jsonl` (for reports of a finished run), all but the plugins'
/// logs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case's id.
    pub id: String,
    /// Its file.
    pub file: PathBuf,
    /// The agent it talks to (empty when the file could not be read).
    pub agent: String,
    /// The connections it ran over.
    pub connections: Vec<Connection>,
    /// Its success ratio.
    pub success_ratio: SuccessRatio,
    /// How it ended.
    pub status: CaseStatus,
    /// The samples that ran, by index. Samples that could no longer change
    /// the outcome were not started.
    pub samples: Vec<SampleResult>,
    /// Why the case could not run at all (bad file), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// Wall-clock time of the whole case, in milliseconds.
    pub duration_ms: f64,
}

impl CaseResult {
    /// How many samples passed.
    pub fn passed_samples(&self) -> usize {
        self.samples.iter().filter(|s| s.passed).count()
    }

    /// The status given the samples that ran.
    pub fn status_of(required: u32, samples: &[SampleResult]) -> CaseStatus {
        let passed = samples.iter().filter(|s| s.passed).count();
        let failed: Vec<&SampleResult> = samples.iter().filter(|s| !s.passed).collect();
        if passed >= required as usize {
            if failed.is_empty() { CaseStatus::Passed } else { CaseStatus::Flaky }
        } else if failed.iter().any(|s| s.has_failed_check()) {
            CaseStatus::Failed
        } else {
            CaseStatus::Error
        }
    }
}

/// One sample: every interaction over every connection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleResult {
    /// 0-based index (sent to the agent as `x-assay-sample` metadata).
    pub index: u32,
    /// Whether every run passed.
    pub passed: bool,
    /// One run per connection, in the case's order.
    pub runs: Vec<ConnectionRun>,
    /// Wall-clock time, in milliseconds.
    pub duration_ms: f64,
    /// Whether its answers (the requests and responses, and the actual
    /// values its checks saw) were left out: its case had kept
    /// [`MAX_KEPT_ANSWER_BYTES`] of earlier samples' already. Its verdicts
    /// are kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub answers_left_out: bool,
}

/// The most bytes of samples one case keeps whole, answers included (half
/// of what its results line may hold, the rest left for the verdicts of
/// the samples after): later samples keep their verdicts and leave their
/// answers out, so that a case of a thousand samples of large answers
/// cannot fill the memory.
pub const MAX_KEPT_ANSWER_BYTES: usize = MAX_RESULT_LINE_BYTES / 2;

impl SampleResult {
    /// How many bytes it takes in a results line.
    pub fn line_bytes(&self) -> usize {
        serde_json::to_vec(self).map_or(0, |line| line.len())
    }

    /// Leaves its answers out: each interaction's request and response
    /// and each check's actual value; the verdicts stay.
    pub fn leave_answers_out(&mut self) {
        for interaction in self.runs.iter_mut().flat_map(|run| &mut run.interactions) {
            interaction.request = None;
            interaction.response = None;
            for check in &mut interaction.checks {
                check.actual = None;
                check.actual_is_answer = false;
            }
        }
        self.answers_left_out = true;
    }

    /// Whether some check failed (rather than only errors), or an answered
    /// interaction whose checks all ran missed its pass rule (promptfoo's
    /// test `threshold`).
    pub fn has_failed_check(&self) -> bool {
        let interactions = || self.runs.iter().flat_map(|r| &r.interactions);
        interactions().flat_map(|i| &i.checks).any(|c| c.verdict.outcome == Outcome::Fail)
            || interactions()
                .any(|i| !i.passed && i.error.is_none() && i.checks.iter().all(|c| c.verdict.outcome != Outcome::Error))
    }
}

/// The conversation over one connection, from a fresh start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConnectionRun {
    /// The connection.
    pub connection: Connection,
    /// Whether every interaction passed.
    pub passed: bool,
    /// The interactions that ran; a conversation stops at the first
    /// interaction whose request failed.
    pub interactions: Vec<InteractionResult>,
}

/// One turn: the request's outcome and its checks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InteractionResult {
    /// 0-based index in the case.
    pub index: usize,
    /// What was sent (absent in results written before assay recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestRecord>,
    /// Whether the request succeeded and every check passed.
    pub passed: bool,
    /// The checks, in plan order (empty if the request failed).
    pub checks: Vec<CheckResult>,
    /// Why the request failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// What the matcher plugins logged while checking it (not read back
    /// from results).
    #[serde(default, skip_serializing_if = "Vec::is_empty", skip_deserializing)]
    pub logs: Vec<PluginLog>,
    /// What came back, reduced (absent if the request failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseRecord>,
    /// The tokens the answer cost, when the connection reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What the answer cost in US dollars, when the connection knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// How long the agent took to answer (the request's latency), in
    /// milliseconds.
    pub agent_ms: f64,
    /// Wall-clock time of the request and its checks, in milliseconds.
    pub duration_ms: f64,
}

impl InteractionResult {
    /// The result of interaction `index` whose request (`request`, if it
    /// was sent) failed with `error` after `elapsed_ms`: no answer, no
    /// checks.
    pub fn failed(index: usize, request: Option<RequestRecord>, error: RunError, elapsed_ms: f64) -> InteractionResult {
        InteractionResult {
            index,
            request,
            passed: false,
            checks: Vec::new(),
            error: Some(error),
            logs: Vec::new(),
            response: None,
            usage: None,
            cost: None,
            agent_ms: elapsed_ms,
            duration_ms: elapsed_ms,
        }
    }

    /// The actual value `check` (one of its checks) looked at, as results
    /// keep it: its own, or the preview of the answer text it shares.
    pub fn actual_of<'a>(&'a self, check: &'a CheckResult) -> Option<Cow<'a, str>> {
        match (&check.actual, check.actual_is_answer) {
            (Some(actual), _) => Some(Cow::Borrowed(actual)),
            (None, true) => self.response.as_ref()?.text.as_deref().map(actual_preview),
            (None, false) => None,
        }
    }

    /// Keeps the answer text once: a check on `text` whose actual value is
    /// the answer's preview leaves it to the response
    /// (`actual_is_answer`), which saves a results line a copy of the
    /// answer per check.
    pub fn share_answer(&mut self) {
        let Some(text) = self.response.as_ref().and_then(|r| r.text.as_deref()) else { return };
        let shown = actual_preview(text);
        for check in &mut self.checks {
            if check.target == "text" && check.actual.as_deref() == Some(&*shown) {
                check.actual = None;
                check.actual_is_answer = true;
            }
        }
    }
}

/// What an interaction sent the agent: its text and the sly_data it
/// carried (its own and what earlier turns returned), as the reports show
/// them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// The text sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The sly_data sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sly_data: Option<Map<String, Value>>,
}

/// The reduced response, as kept in results: all of what the checks and
/// the next turn saw, so that a replay ([`crate::job::Replay`]) sees
/// exactly what the run saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseRecord {
    /// The answer text, whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The answer's structure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure: Option<Map<String, Value>>,
    /// The returned sly_data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sly_data: Option<Map<String, Value>>,
    /// The returned chat_context (what a next turn would continue from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_context: Option<Value>,
    /// Every message, kept when the interaction asked for MAXIMAL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<ChatMessage>,
    /// Whether the text is the JSON of an answer that is not text
    /// ([`AgentResponse::text_is_json`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub text_is_json: bool,
}

impl ResponseRecord {
    /// The record of `response`; its messages are kept when `filter` is
    /// MAXIMAL.
    pub fn of(response: AgentResponse, filter: ChatFilter) -> ResponseRecord {
        let messages = if filter == ChatFilter::Maximal { response.messages } else { Vec::new() };
        ResponseRecord {
            text: response.text,
            structure: response.structure,
            sly_data: response.sly_data,
            chat_context: response.chat_context,
            messages,
            text_is_json: response.text_is_json,
        }
    }

    /// The response it records, as the checks saw it (the tokens it cost
    /// are not the replay's).
    pub fn into_response(self) -> AgentResponse {
        AgentResponse {
            text: self.text,
            structure: self.structure,
            sly_data: self.sly_data,
            chat_context: self.chat_context,
            messages: self.messages,
            usage: None,
            cost: None,
            text_is_json: self.text_is_json,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{ACTUAL_PREVIEW_CHARS, Verdict};
    use serde_json::json;

    fn check(target: &str, actual: Option<&str>) -> CheckResult {
        CheckResult {
            target: target.to_owned(),
            key: "keywords".to_owned(),
            expected: json!("x"),
            actual: actual.map(str::to_owned),
            actual_is_answer: false,
            verdict: Verdict::fail("missing"),
            gate: true,
            line: None,
        }
    }

    fn answered(text: &str, checks: Vec<CheckResult>) -> InteractionResult {
        InteractionResult {
            index: 0,
            request: None,
            passed: false,
            checks,
            error: None,
            logs: Vec::new(),
            response: Some(ResponseRecord { text: Some(text.to_owned()), ..ResponseRecord::default() }),
            usage: None,
            cost: None,
            agent_ms: 1.0,
            duration_ms: 1.0,
        }
    }

    #[test]
    fn the_answer_is_kept_once_and_each_check_of_it_still_reads_its_actual_value() {
        let long: String = "é".repeat(ACTUAL_PREVIEW_CHARS + 5);
        for text in ["hello", long.as_str()] {
            let shown = actual_preview(text).into_owned();
            let mut interaction = answered(
                text,
                vec![
                    check("text", Some(&shown)),
                    check("text", Some("something else")),
                    check("structure.a", Some(&shown)),
                    check("text", None),
                ],
            );
            let before: Vec<Option<String>> =
                interaction.checks.iter().map(|c| interaction.actual_of(c).map(Cow::into_owned)).collect();
            interaction.share_answer();
            let shared: Vec<bool> = interaction.checks.iter().map(|c| c.actual_is_answer).collect();
            assert_eq!(shared, [true, false, false, false]);
            assert_eq!(interaction.checks[0].actual, None);
            // Written and read back, every check gives the value it gave.
            let line = serde_json::to_string(&interaction).unwrap();
            assert_eq!(line.matches("\"actual\":").count(), 2, "only the checks of other values keep theirs: {line}");
            let read: InteractionResult = serde_json::from_str(&line).unwrap();
            let after: Vec<Option<String>> =
                read.checks.iter().map(|c| read.actual_of(c).map(Cow::into_owned)).collect();
            assert_eq!(after, before);
        }
    }

    #[test]
    fn leaving_answers_out_leaves_no_check_pointing_at_an_answer() {
        let mut interaction = answered("hello", vec![check("text", Some("hello"))]);
        interaction.share_answer();
        let mut sample = SampleResult {
            index: 0,
            passed: false,
            runs: vec![ConnectionRun {
                connection: Connection::Direct,
                passed: false,
                interactions: vec![interaction],
            }],
            duration_ms: 1.0,
            answers_left_out: false,
        };
        sample.leave_answers_out();
        let check = &sample.runs[0].interactions[0].checks[0];
        assert!(!check.actual_is_answer && check.actual.is_none());
        assert_eq!(sample.runs[0].interactions[0].actual_of(check), None);
    }
}
