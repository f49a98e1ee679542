//! The results directory: `results.jsonl`, one line per case, appended and
//! flushed as each case finishes (a killed run keeps every finished case),
//! and `summary.json` at the end, both redacted. Results hold the agent's
//! responses, so they are private: the directory is made 0700 (when assay
//! makes it) and both files are 0600, never written through a symbolic
//! link. A line the disk had no room for is taken back whole, so the file
//! holds whole lines only, whatever failed.
//!
//! Each case's line is the [`CaseResult`] with its [`CaseFlags`] added
//! (`api_error`, `empty_output`, `evaluation_error`, always present);
//! `summary.json` is the [`RunSummary`] with how many cases had each flag
//! (`flags`) and, when some file held more than one case, each such
//! suite's [`SuiteSummary`] (`suites`), and where the run's cases came
//! from beyond its case files ([`Provenance`]: its shard, the run it
//! reran, the directories merged into it).

use crate::job::{CaseResult, MAX_RESULT_LINE_BYTES};
use crate::private_files;
use crate::report::{CaseFlags, FlagCounts, Redactor, SuiteSummary, SuiteTally};
use crate::run::{EventKind, Reporter, RunEvent, RunSummary, Shard};
use serde::Serialize;
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The file of a run's totals, in its results directory.
pub const SUMMARY_FILE: &str = "summary.json";

/// Writes `results.jsonl` and `summary.json` into a directory.
#[derive(Debug)]
pub struct ResultsDir {
    dir: PathBuf,
    lines: File,
    /// How many bytes of whole lines `results.jsonl` holds.
    written: u64,
    redactor: Redactor,
    flags: FlagCounts,
    suites: SuiteTally,
    provenance: Provenance,
    info: RunInfo,
}

/// Where a run's cases came from beyond its case files, as `summary.json`
/// records it; each part is left out when it does not apply.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Provenance {
    /// The shard the run was (`--shard K/N`): `{"index": K, "total": N}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The results directory whose failed cases it ran again
    /// (`--rerun-failed DIR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<PathBuf>,
    /// The results directories merged into it (`assay merge`), in the
    /// order given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedDir>,
    /// The shards missing from a merge that was allowed to go without them
    /// (`--allow-missing`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_shards: Vec<Shard>,
}

/// Who made the run, and when, as `summary.json`'s `run` records it (the
/// HTML report's header): assay's version, the start time, and what the
/// caller says of itself (the command line, the project's commit).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunInfo {
    /// The version of assay that ran it.
    pub assay: String,
    /// When it started (UTC, RFC 3339).
    pub started_at: String,
    /// The command that ran it, arguments as given (a URL's user and
    /// password left out).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The project's git commit, when it is in a repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl RunInfo {
    /// This assay, starting now.
    pub fn now() -> RunInfo {
        RunInfo {
            assay: env!("CARGO_PKG_VERSION").to_owned(),
            started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            command: Vec::new(),
            commit: None,
        }
    }

    /// The same, run by `command` (a URL's `user:password@` is left out).
    pub fn with_command(self, command: impl IntoIterator<Item = String>) -> RunInfo {
        RunInfo { command: command.into_iter().map(|arg| without_userinfo(&arg)).collect(), ..self }
    }

    /// The same, of the project at `commit`.
    pub fn with_commit(self, commit: Option<String>) -> RunInfo {
        RunInfo { commit, ..self }
    }
}

/// `arg` with the `user:password@` of a URL in it left out.
fn without_userinfo(arg: &str) -> String {
    let Some(scheme_end) = arg.find("://") else { return arg.to_owned() };
    let rest = &arg[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}://…@{}", &arg[..scheme_end], &rest[at + 1..]),
        None => arg.to_owned(),
    }
}

/// A line of `results.jsonl`.
#[derive(Serialize)]
struct CaseLine<'a> {
    #[serde(flatten)]
    case: &'a CaseResult,
    #[serde(flatten)]
    flags: CaseFlags,
}

/// A case's line without its samples, which made it too long.
#[derive(Serialize)]
struct TrimmedLine<'a> {
    #[serde(flatten)]
    case: &'a CaseResult,
    #[serde(flatten)]
    flags: CaseFlags,
    samples_left_out: String,
}

/// `summary.json`.
#[derive(Serialize)]
struct SummaryFile<'a> {
    #[serde(flatten)]
    summary: &'a RunSummary,
    flags: FlagCounts,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suites: Vec<SuiteSummary>,
    #[serde(flatten)]
    provenance: &'a Provenance,
    run: &'a RunInfo,
}

impl ResultsDir {
    /// Creates the directory (and parents) and an empty `results.jsonl`.
    pub fn create(dir: &Path) -> io::Result<ResultsDir> {
        private_files::create_dir(dir).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create the results directory `{}`: {e}", dir.display()))
        })?;
        let path = dir.join(crate::job::RESULTS_FILE);
        let lines = private_files::create(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot create `{}`: {e}", path.display())))?;
        Ok(ResultsDir {
            dir: dir.to_owned(),
            lines,
            written: 0,
            redactor: Redactor::none(),
            flags: FlagCounts::default(),
            suites: SuiteTally::default(),
            provenance: Provenance::default(),
            info: RunInfo::now(),
        })
    }

    /// The same, hiding `redactor`'s secrets.
    pub fn with_redactor(self, redactor: Redactor) -> ResultsDir {
        ResultsDir { redactor, ..self }
    }

    /// The same, recording `provenance` in `summary.json`.
    pub fn with_provenance(self, provenance: Provenance) -> ResultsDir {
        ResultsDir { provenance, ..self }
    }

    /// The same, recording `info` as `summary.json`'s `run`.
    pub fn with_run_info(self, info: RunInfo) -> ResultsDir {
        ResultsDir { info, ..self }
    }

    /// Appends `case` as another results directory recorded it: its line
    /// `recorded` is kept whole (the plugins' logs, which a [`CaseResult`]
    /// does not read back, included), redacted again, and the case counted
    /// for `summary.json` as a finished one is (`assay merge`).
    pub fn copy_case(&mut self, case: &CaseResult, recorded: &serde_json::Value) -> io::Result<()> {
        self.add_case(case, recorded)
    }

    /// Counts `case` and appends `line`, its line, redacted: one write of
    /// a whole line, so that a kill can only lose lines not yet written,
    /// never leave half of one.
    ///
    /// A line longer than [`MAX_RESULT_LINE_BYTES`] is written without the
    /// case's samples, and says so (`samples_left_out`).
    fn add_case(&mut self, case: &CaseResult, line: &impl Serialize) -> io::Result<()> {
        self.flags.add(CaseFlags::of(case));
        self.suites.add(case);
        let mut line = self.redactor.to_json(line, false)?;
        if line.len() >= MAX_RESULT_LINE_BYTES {
            let without = CaseResult {
                id: case.id.clone(),
                file: case.file.clone(),
                agent: case.agent.clone(),
                connections: case.connections.clone(),
                success_ratio: case.success_ratio,
                status: case.status,
                samples: Vec::new(),
                error: case.error.clone(),
                duration_ms: case.duration_ms,
            };
            let samples_left_out = format!(
                "its {} samples made a line of {} bytes, over the {} MiB a results line may be; they are left out",
                case.samples.len(),
                line.len(),
                MAX_RESULT_LINE_BYTES >> 20
            );
            let flags = CaseFlags::of(case);
            line = self.redactor.to_json(&TrimmedLine { case: &without, flags, samples_left_out }, false)?;
        }
        line.push(b'\n');
        self.append(&line).map_err(|e| cannot_write(&self.dir.join(crate::job::RESULTS_FILE), e))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one line: whole, or (when the write fails) not at all.
    fn append(&mut self, line: &[u8]) -> io::Result<()> {
        let written = self.lines.write_all(line).and_then(|()| self.lines.flush());
        match written {
            Ok(()) => {
                self.written += line.len() as u64;
                Ok(())
            }
            Err(error) => {
                // Best effort: a file that took half a line gives it back,
                // and the next line goes where that one started.
                let _ = self.lines.set_len(self.written);
                let _ = self.lines.seek(SeekFrom::Start(self.written));
                Err(error)
            }
        }
    }
}

/// `error` as a fragment after "failed to": what could not be written where.
fn cannot_write(path: &Path, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("write `{}`: {error}", path.display()))
}

impl Reporter for ResultsDir {
    fn report(&mut self, event: &RunEvent<'_>) -> io::Result<()> {
        match event.kind {
            EventKind::CaseFinished(case) => self.add_case(case, &CaseLine { case, flags: CaseFlags::of(case) }),
            EventKind::RunFinished(summary) => {
                let path = self.dir.join(crate::report::SUMMARY_FILE);
                let file = SummaryFile {
                    summary,
                    flags: self.flags,
                    suites: self.suites.suites(),
                    provenance: &self.provenance,
                    run: &self.info,
                };
                let mut text = self.redactor.to_json(&file, true)?;
                text.push(b'\n');
                private_files::write(&path, &text).map_err(|e| cannot_write(&path, e))
            }
            EventKind::RunStarted { .. }
            | EventKind::CaseStarted { .. }
            | EventKind::SampleFinished { .. }
            | EventKind::CaseSlow { .. } => Ok(()),
        }
    }
}


/// One directory merged, as `summary.json`'s `merged_from` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MergedDir {
    /// The directory.
    pub dir: PathBuf,
    /// How many of the merged cases are its results.
    pub cases: usize,
    /// Its shard, if it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The directory it reran the failed cases of, if it is a rerun.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<PathBuf>,
    /// For a rerun: how many results of the directories before it it
    /// replaced.
    #[serde(skip_serializing_if = "is_zero")]
    pub replaced: usize,
    /// Its run's wall-clock time, in milliseconds (unknown for an
    /// incomplete run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// Whether its run never finished (no `summary.json`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{self, SECRET};
    use crate::run::RunSummary;

    /// `results.jsonl` and `summary.json` of the fixed run ending with
    /// `summary`.
    fn write(summary: impl Fn(RunSummary) -> RunSummary) -> (String, String) {
        write_cases(fixtures::cases(), summary)
    }

    /// The same for `cases`.
    fn write_cases(cases: Vec<CaseResult>, summary: impl Fn(RunSummary) -> RunSummary) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let summary = summary(fixtures::summary(&cases));
        let info = RunInfo { started_at: "2026-11-29T04:00:00Z".into(), ..RunInfo::now() }
            .with_command(["assay", "run", "--agent-url", "https://ada:hunter2@example.com/x"].map(String::from))
            .with_commit(Some("0123456789ab".into()));
        let mut results =
            ResultsDir::create(dir.path()).unwrap().with_redactor(Redactor::new([SECRET])).with_run_info(info);
        for event in fixtures::events(&cases, &summary) {
            results.report(&event).unwrap();
        }
        let read = |name| std::fs::read_to_string(dir.path().join(name)).unwrap();
        (read(crate::job::RESULTS_FILE), read(crate::report::SUMMARY_FILE))
    }

    #[test]
    fn a_line_too_long_is_written_without_its_samples_and_says_so() {
        let huge = fixtures::answered("huge", &"x".repeat(MAX_RESULT_LINE_BYTES));
        let small = fixtures::answered("small", "hello");
        let (lines, summary) = write_cases(vec![huge, small], |summary| summary);
        let lines: Vec<serde_json::Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!((lines[0]["id"].as_str(), lines[0]["status"].as_str()), (Some("huge"), Some("passed")));
        assert_eq!(lines[0]["samples"], serde_json::json!([]));
        let why = lines[0]["samples_left_out"].as_str().unwrap();
        assert!(why.contains("its 1 samples") && why.contains("64 MiB"), "{why}");
        assert_eq!(lines[1]["samples"].as_array().unwrap().len(), 1);
        assert!(lines[1].get("samples_left_out").is_none());
        assert!(summary.contains("\"passed\": 2"), "{summary}");
    }

    #[test]
    fn results_jsonl() {
        let (lines, _) = write(|s| s);
        insta::assert_snapshot!(lines);
    }

    #[test]
    fn summary_json() {
        let (_, summary) = write(|s| s);
        insta::assert_snapshot!(summary);
    }

    #[test]
    fn every_line_carries_the_three_flags_and_summary_json_counts_them_and_sums_up_each_suite() {
        let (lines, summary) =
            write_cases(fixtures::cases().into_iter().chain(fixtures::suite_cases()).collect(), |s| s);
        let lines: Vec<serde_json::Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let flagged = |flag: &str| -> Vec<&str> {
            lines.iter().filter(|l| l[flag].as_bool().unwrap()).map(|l| l["id"].as_str().unwrap()).collect()
        };
        assert_eq!(flagged("api_error"), ["http/down"]);
        assert_eq!(flagged("empty_output"), ["cat/blank"]);
        assert_eq!(flagged("evaluation_error"), ["escape/\u{1b}[2Kforged <&>", "ppl/2"]);
        // A check's score and the plugin's extras stay on its check.
        assert_eq!(lines[8]["samples"][0]["runs"][0]["interactions"][0]["checks"][1]["score"], 0.9);
        insta::assert_snapshot!(summary);
    }

    #[test]
    fn summary_json_of_a_cancelled_run() {
        let (_, summary) = write(fixtures::cancelled);
        insta::assert_snapshot!(summary);
    }
}
