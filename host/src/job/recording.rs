//! Replay: answers recorded once, given again without asking any agent.
//!
//! A job's [`Recording`] holds an answer per sample × connection × turn; the
//! runner takes every answer of a job that has one from it, and asks no
//! agent. `assay validate` records each mock response as the one answer of
//! a job over [`Connection::Replay`]; [`Replay::read`] reads a results
//! directory's `results.jsonl` into one recording per case, which a run
//! given it ([`crate::run::RunOptions::replay`]) matches to its cases by id,
//! then by sample index, connection name and interaction index. What has no
//! recording is an error verdict naming it; an interaction recorded as an
//! error (a timeout, an agent that was down) is that error again.

use crate::agent::AgentResponse;
use crate::case::Connection;
use crate::errors::{ErrorKind, ReplayError};
use crate::job::{MAX_RESULT_LINE_BYTES, ResponseRecord, RunError};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// What one turn got: its answer, or the error the run recorded instead.
pub type RecordedAnswer = Result<AgentResponse, RunError>;

/// The answers recorded for one job, per sample, connection and turn. A
/// case's recording in a results directory is read from its line when
/// first asked for, and goes with the job: a replay holds no more answers
/// at once than the cases in flight.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    /// Where it was recorded, for messages.
    source: Arc<Path>,
    /// Where its answers are read from, if they were not given.
    line: Option<StoredLine>,
    /// By sample index: each connection's run, in the recorded order; or
    /// why its line could not be read again.
    samples: OnceLock<Result<Samples, RunError>>,
}

/// By sample index: each connection's run, in the recorded order.
type Samples = BTreeMap<u32, Vec<RecordedRun>>;

/// The turns of one sample over one connection.
#[derive(Clone, Debug, PartialEq)]
struct RecordedRun {
    /// The connection's name.
    connection: String,
    /// By turn index (0-based).
    turns: BTreeMap<usize, RecordedAnswer>,
}

impl Recording {
    /// The one answer of the first turn of the first sample over
    /// `connection`, recorded in `source` (a validation's mock response).
    pub fn one(source: &Path, connection: &Connection, answer: AgentResponse) -> Recording {
        let run = RecordedRun { connection: connection.name().to_owned(), turns: BTreeMap::from([(0, Ok(answer))]) };
        let samples = OnceLock::from(Ok(BTreeMap::from([(0, vec![run])])));
        Recording { source: Arc::from(source), line: None, samples }
    }

    /// The answer recorded for turn `turn` (0-based) of sample `sample` over
    /// `connection`, or the `not-recorded` error naming case `case` and what
    /// has no recording.
    pub fn answer(&self, case: &str, sample: u32, connection: &Connection, turn: usize) -> RecordedAnswer {
        let samples = match self.samples.get_or_init(|| self.read(case)) {
            Ok(samples) => samples,
            Err(error) => return Err(error.clone()),
        };
        let missing = |what: String, held: String| RunError {
            kind: ErrorKind::NotRecorded,
            message: format!(
                "case `{case}` has no recording of {what} in `{}` ({held})\n\nConsider running the case without --replay to record it",
                self.source.display()
            ),
        };
        let Some(runs) = samples.get(&sample) else {
            let held = match samples.keys().map(u32::to_string).collect::<Vec<_>>() {
                held if held.is_empty() => "it holds no sample".to_owned(),
                held => format!("it holds {}: {}", crate::plural::count(held.len(), "sample"), held.join(", ")),
            };
            return Err(missing(format!("sample {sample}"), held));
        };
        let Some(run) = runs.iter().find(|run| run.connection == connection.name()) else {
            let over: Vec<String> = runs.iter().map(|run| format!("`{}`", run.connection)).collect();
            let held = format!("sample {sample} ran over {}", over.join(", "));
            return Err(missing(format!("sample {sample} over `{connection}`"), held));
        };
        match run.turns.get(&turn) {
            Some(answer) => answer.clone(),
            None => {
                let held = match run.turns.keys().next_back() {
                    Some(last) => format!("the recording ends after interaction {}", last + 1),
                    None => "the recording holds no interaction".to_owned(),
                };
                Err(missing(format!("interaction {} of sample {sample} over `{connection}`", turn + 1), held))
            }
        }
    }

    /// Its answers, read from its line (which [`Replay::read`] has read
    /// once, so that only a file changed since can fail).
    fn read(&self, case: &str) -> Result<Samples, RunError> {
        let Some(stored) = &self.line else { return Ok(Samples::new()) };
        let parsed = stored.bytes().map_err(|e| e.to_string()).and_then(|bytes| {
            let line: CaseLine = serde_json::from_slice(bytes.trim_ascii()).map_err(|e| json_error(&e))?;
            match line.id == case {
                true => samples(line.samples),
                false => Err(format!("it records case `{}` now", line.id)),
            }
        });
        parsed.map_err(|cause| RunError {
            kind: ErrorKind::NotRecorded,
            message: format!(
                "case `{case}` has no recording on line {} of `{}` any more: {cause}\n\nConsider leaving a results directory alone while it is replayed, and writing the replay's results to another one",
                stored.number,
                self.source.display()
            ),
        })
    }
}

/// Where a case's line is in `results.jsonl`.
#[derive(Clone, Debug)]
struct StoredLine {
    file: Arc<Mutex<File>>,
    offset: u64,
    len: usize,
    /// 1-based.
    number: usize,
}

impl PartialEq for StoredLine {
    fn eq(&self, other: &StoredLine) -> bool {
        Arc::ptr_eq(&self.file, &other.file) && self.offset == other.offset && self.len == other.len
    }
}

impl StoredLine {
    /// The line's bytes, read again.
    fn bytes(&self) -> std::io::Result<Vec<u8>> {
        let mut file = self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = vec![0; self.len];
        file.read_exact(&mut bytes)?;
        Ok(bytes)
    }
}

/// A results directory's recordings, by case id: what
/// [`crate::run::RunOptions::replay`] answers a run's cases from. It keeps
/// `results.jsonl` open and where each case's line is; a case's answers
/// are read when its job first asks for one, so `results.jsonl` must not
/// change while a replay runs (a replay's own results go elsewhere).
pub struct Replay {
    /// The `results.jsonl` read.
    source: Arc<Path>,
    file: Arc<Mutex<File>>,
    lines: HashMap<String, (u64, usize, usize)>,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay").field("source", &self.source).field("cases", &self.lines.len()).finish()
    }
}

impl Replay {
    /// Reads `results.jsonl` of the results directory `dir` (or the file
    /// `dir` itself): every line must be a case's result, each case once.
    pub fn read(dir: &Path) -> Result<Replay, ReplayError> {
        let path = if dir.is_file() { dir.to_owned() } else { dir.join(crate::job::RESULTS_FILE) };
        let read_error = |cause| ReplayError::Read { path: path.clone(), cause };
        let file = File::open(&path).map_err(read_error)?;
        if !file.metadata().map_err(read_error)?.is_file() {
            let cause = std::io::Error::other("it is not a regular file (a device, a pipe or a folder never ends)");
            return Err(ReplayError::Read { path, cause });
        }
        let mut reader = std::io::BufReader::new(file.try_clone().map_err(read_error)?);
        let mut lines: HashMap<String, (u64, usize, usize)> = HashMap::new();
        let (mut line, mut offset) = (Vec::new(), 0u64);
        for number in 1.. {
            line.clear();
            let limit = MAX_RESULT_LINE_BYTES as u64 + 1;
            let len = (&mut reader).take(limit).read_until(b'\n', &mut line).map_err(read_error)?;
            if len == 0 {
                break;
            }
            if len > MAX_RESULT_LINE_BYTES {
                let cause = format!("it is longer than the {} MiB a results line may be", MAX_RESULT_LINE_BYTES >> 20);
                return Err(ReplayError::Line { path: path.clone(), line: number, cause });
            }
            let start = offset;
            offset += len as u64;
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let bad_line = |cause: String| ReplayError::Line { path: path.clone(), line: number, cause };
            let CaseLine { id, samples: recorded } =
                serde_json::from_slice(text).map_err(|e| bad_line(json_error(&e)))?;
            samples(recorded).map_err(bad_line)?;
            if let Some(&(_, _, first)) = lines.get(&id) {
                return Err(ReplayError::Duplicate { path: path.clone(), id, first, line: number });
            }
            lines.insert(id, (start, len, number));
        }
        Ok(Replay { source: Arc::from(path.as_path()), file: Arc::new(Mutex::new(file)), lines })
    }

    /// The `results.jsonl` it was read from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// How many cases it recorded.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether it recorded no case.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The recording of case `id`, read from its line when first asked.
    pub fn recording(&self, id: &str) -> Option<Arc<Recording>> {
        let &(offset, len, number) = self.lines.get(id)?;
        let line = StoredLine { file: self.file.clone(), offset, len, number };
        Some(Arc::new(Recording { source: self.source.clone(), line: Some(line), samples: OnceLock::new() }))
    }

    /// The error of case `id`, which it did not record.
    pub(crate) fn not_recorded(&self, id: &str) -> RunError {
        RunError {
            kind: ErrorKind::NotRecorded,
            message: format!(
                "case `{id}` has no recording in `{}`\n\nConsider replaying the paths the recorded run was given (a case's id is its path below them), or running the case without --replay",
                self.source.display()
            ),
        }
    }
}

/// A serde_json error without its position in the line's text, which is
/// line 1 (the position in the file is said otherwise).
pub(crate) fn json_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&position) {
        Some(message) => format!("{message} (column {})", error.column()),
        None => text,
    }
}

/// What a line of `results.jsonl` has that a replay needs (a case's
/// result, read leniently: the checks are evaluated afresh).
#[derive(Deserialize)]
#[serde(expecting = "a JSON object with the case's `id` and `samples`")]
struct CaseLine {
    id: String,
    #[serde(default)]
    samples: Vec<SampleLine>,
}

#[derive(Deserialize)]
struct SampleLine {
    index: u32,
    #[serde(default)]
    runs: Vec<RunLine>,
}

#[derive(Deserialize)]
struct RunLine {
    connection: String,
    #[serde(default)]
    interactions: Vec<InteractionLine>,
}

#[derive(Deserialize)]
struct InteractionLine {
    index: usize,
    #[serde(default)]
    error: Option<RunError>,
    #[serde(default)]
    response: Option<ResponseRecord>,
}

/// The answers of a case's recorded samples, or what is wrong with them.
fn samples(recorded: Vec<SampleLine>) -> Result<Samples, String> {
    let mut samples = Samples::new();
    for sample in recorded {
        let mut runs = Vec::new();
        for run in sample.runs {
            let mut turns = BTreeMap::new();
            for interaction in run.interactions {
                let answer = match (interaction.error, interaction.response) {
                    (Some(error), _) => Err(error),
                    (None, Some(response)) => Ok(response.into_response()),
                    (None, None) => {
                        return Err(format!(
                            "interaction {} of sample {} over `{}` holds neither a response nor an error",
                            interaction.index + 1,
                            sample.index,
                            run.connection
                        ));
                    }
                };
                turns.insert(interaction.index, answer);
            }
            runs.push(RecordedRun { connection: run.connection, turns });
        }
        samples.insert(sample.index, runs);
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &str = concat!(
        r#"{"id":"a","file":"a.hocon","agent":"echo","status":"passed","samples":[{"index":0,"passed":true,"runs":["#,
        r#"{"connection":"http","passed":true,"interactions":["#,
        r#"{"index":0,"passed":true,"checks":[],"response":{"text":"hi","structure":{"turn":1},"chat_context":{"h":1}},"agent_ms":1.0},"#,
        r#"{"index":1,"passed":false,"checks":[],"error":{"kind":"interaction-timeout","message":"late"},"agent_ms":1.0}"#,
        r#"]}]}]}"#,
        "\n",
        r#"{"id":"b","samples":[]}"#,
        "\n"
    );

    fn replay(text: &str) -> Result<Replay, ReplayError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(crate::job::RESULTS_FILE), text).unwrap();
        Replay::read(dir.path())
    }

    /// The not-recorded error's message, its source written `SOURCE`.
    fn message(replay: &Replay, answer: RecordedAnswer) -> String {
        let error = answer.unwrap_err();
        assert_eq!(error.kind, ErrorKind::NotRecorded);
        error.message.replace(&replay.source().display().to_string(), "SOURCE")
    }

    #[test]
    fn a_recording_gives_each_turn_its_answer_or_its_recorded_error() {
        let replay = replay(LINES).unwrap();
        assert_eq!(replay.len(), 2);
        let a = replay.recording("a").unwrap();
        let first = a.answer("a", 0, &Connection::Http, 0).unwrap();
        assert_eq!(first.text.as_deref(), Some("hi"));
        assert_eq!(first.structure.unwrap()["turn"], 1);
        assert_eq!(first.chat_context, Some(serde_json::json!({"h": 1})));
        let second = a.answer("a", 0, &Connection::Http, 1).unwrap_err();
        assert_eq!((second.kind, second.message.as_str()), (ErrorKind::InteractionTimeout, "late"));
    }

    #[test]
    fn what_has_no_recording_is_named_with_its_case_and_what_the_recording_holds() {
        let replay = replay(LINES).unwrap();
        let a = replay.recording("a").unwrap();
        let consider = "\n\nConsider running the case without --replay to record it";
        assert_eq!(
            message(&replay, a.answer("a", 1, &Connection::Http, 0)),
            format!("case `a` has no recording of sample 1 in `SOURCE` (it holds 1 sample: 0){consider}")
        );
        assert_eq!(
            message(&replay, a.answer("a", 0, &Connection::Direct, 0)),
            format!(
                "case `a` has no recording of sample 0 over `direct` in `SOURCE` (sample 0 ran over `http`){consider}"
            )
        );
        assert_eq!(
            message(&replay, a.answer("a", 0, &Connection::Http, 2)),
            format!(
                "case `a` has no recording of interaction 3 of sample 0 over `http` in `SOURCE` (the recording ends after interaction 2){consider}"
            )
        );
        let b = replay.recording("b").unwrap();
        assert_eq!(
            message(&replay, b.answer("b", 0, &Connection::Http, 0)),
            format!("case `b` has no recording of sample 0 in `SOURCE` (it holds no sample){consider}")
        );
        assert!(replay.recording("c").is_none());
        assert_eq!(
            replay.not_recorded("c").message.replace(&replay.source().display().to_string(), "SOURCE"),
            "case `c` has no recording in `SOURCE`\n\nConsider replaying the paths the recorded run was given (a case's id is its path below them), or running the case without --replay"
        );
    }

    #[test]
    fn a_recording_whose_line_changed_after_the_replay_read_it_is_an_error_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::job::RESULTS_FILE);
        std::fs::write(&path, LINES).unwrap();
        let replay = Replay::read(dir.path()).unwrap();
        let consider = "\n\nConsider leaving a results directory alone while it is replayed, and writing the replay's results to another one";
        std::fs::write(&path, LINES.replace(r#""id":"a""#, r#""id":"z""#)).unwrap();
        assert_eq!(
            message(&replay, replay.recording("a").unwrap().answer("a", 0, &Connection::Http, 0)),
            format!("case `a` has no recording on line 1 of `SOURCE` any more: it records case `z` now{consider}")
        );
        std::fs::write(&path, "").unwrap();
        let b = replay.recording("b").unwrap();
        assert_eq!(
            message(&replay, b.answer("b", 0, &Connection::Http, 0)),
            format!("case `b` has no recording on line 2 of `SOURCE` any more: failed to fill whole buffer{consider}")
        );
        // Read once per job: the error stays, and so would the answers.
        assert_eq!(b.answer("b", 0, &Connection::Http, 0), b.answer("b", 0, &Connection::Http, 0));
    }

    #[test]
    fn a_file_that_is_not_a_runs_results_is_an_error_naming_it_and_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::job::RESULTS_FILE);
        let error = Replay::read(dir.path()).unwrap_err().to_string();
        assert!(error.starts_with(&format!("failed to replay `{}`: ", path.display())), "{error}");
        assert!(error.ends_with("(it holds results.jsonl)"), "{error}");

        let line = |text: &str| match replay(text).unwrap_err() {
            ReplayError::Line { line, cause, .. } => format!("{line}: {cause}"),
            other => panic!("{other}"),
        };
        assert_eq!(line("{\"id\":\"a\"}\n{\"id\":\n"), "2: EOF while parsing a value (column 6)");
        assert_eq!(
            line("\n\"ok\"\n"),
            "2: invalid type: string \"ok\", expected a JSON object with the case's `id` and `samples` (column 4)"
        );
        assert_eq!(line("{\"samples\":[]}\n"), "1: missing field `id` (column 14)");
        assert_eq!(line("\u{ff}\n"), "1: expected value (column 1)");
        assert_eq!(
            line(r#"{"id":"a","samples":[{"index":0,"runs":[{"connection":"direct","interactions":[{"index":0}]}]}]}"#),
            "1: interaction 1 of sample 0 over `direct` holds neither a response nor an error"
        );
        match replay("{\"id\":\"a\"}\n\n{\"id\":\"a\"}\n").unwrap_err() {
            ReplayError::Duplicate { id, first, line, .. } => assert_eq!((id.as_str(), first, line), ("a", 1, 3)),
            other => panic!("{other}"),
        }
    }
}
