//! Runs in the background: `POST /v1/runs` takes cases inline (the text of
//! a case file) or as paths under the served root, checks them, and starts
//! the project's runner on a thread of its own, writing a results directory
//! as `assay run` does; `GET /v1/runs/{id}` says whether it is running and,
//! once finished, gives its summary; `GET /v1/runs/{id}/events` streams
//! every event of the run as server-sent events, from the first, whenever
//! the client connects, and ends when the run ends; `DELETE /v1/runs/{id}`
//! stops it.
//!
//! What a run holds is bounded whatever it asks: its events go to
//! `events.jsonl` in its results directory as they happen, and streams read
//! them from there (memory holds a count, not the events); a run is
//! stopped past the server's `--run-timeout`; the results directories of
//! all but the last `--keep-runs` finished runs this server made are
//! removed, and so are their records.
//!
//! Paths reach cases through the project's one door
//! ([`crate::Project::discover_within`]): resolved under the root, every
//! symbolic link followed, and refused when one (or a case file found
//! under it) lands outside; every format `assay run` reads, with the same
//! trust boundary (a server trusts no file unless started with
//! `--allow-commands`). Inline cases are read as case files are (no
//! `include`) but see no environment variable at all (a client is not the
//! server's user), and are refused, with the reason, when they cannot be
//! read.

use crate::case::CaseEnv;
use crate::check::{KeySet, plan_case};
use crate::errors::ProjectError;
use crate::formats::parse_case;
use crate::job::{CaseFilter, CaseReader, DistinctIds, Job, LoadedCase, PendingCase, PendingCases};
use crate::report::{Redactor, ReporterSet, ResultsDir};
use crate::run::{EventKind, Reporter, RunEvent, RunOptions, RunSummary, RunTimeout};
use crate::serve::body::JsonBody;
use crate::serve::error::{ApiError, blocking_while_wanted, json_response};
use crate::serve::{AppState, Shared};
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

/// The file of a run's results directory its events go to, one JSON
/// object a line, each with its `event` name.
const EVENTS_FILE: &str = "events.jsonl";

/// The most events one read of a stream sends before it reads again.
const EVENTS_PER_READ: usize = 256;

/// The most bytes one read of a stream gathers before it sends them (one
/// event more, at most).
const BYTES_PER_READ: usize = 1 << 20;

/// The longest event line: a `case_finished` longer than this gives the
/// case's id, status and error, not its whole line.
const MAX_EVENT_LINE_BYTES: usize = 256 << 10;

/// How the runs of a server are bounded.
#[derive(Clone, Copy, Debug)]
pub struct RunLimits {
    /// The most runs at once.
    pub max_runs: usize,
    /// The most samples one run may have in flight (its `jobs`).
    pub max_jobs: usize,
    /// How long a run may take before it is stopped.
    pub run_timeout: Duration,
    /// How many finished runs keep their results directory and record.
    pub keep_runs: usize,
}

/// The runs of a server.
pub struct Runs {
    root: PathBuf,
    results: PathBuf,
    limits: RunLimits,
    slots: Arc<Semaphore>,
    table: Mutex<RunTable>,
}

#[derive(Default)]
struct RunTable {
    by_id: HashMap<String, Arc<RunRecord>>,
    finished: VecDeque<String>,
}

/// One run: where its events are, and its summary once finished.
struct RunRecord {
    id: String,
    results: PathBuf,
    log: Mutex<RunLog>,
    /// Bumped at each new event, and at the end.
    changed: watch::Sender<usize>,
    /// Set, with the reason, to stop the run.
    stop: watch::Sender<Option<String>>,
}

#[derive(Default)]
struct RunLog {
    /// `events.jsonl`, open for appending while the run runs.
    file: Option<std::fs::File>,
    /// The bytes of whole event lines written to it so far.
    written: u64,
    /// Set when the run ended: `summary.json` (or, if it could not be
    /// written, the run's summary).
    summary: Option<Value>,
}

impl Runs {
    /// Runs of cases under `root` (canonical), writing under `results`.
    pub fn new(root: PathBuf, results: PathBuf, limits: RunLimits) -> Runs {
        let slots = Arc::new(Semaphore::new(limits.max_runs));
        Runs { root, results, limits, slots, table: Mutex::default() }
    }

    fn get(&self, id: &str) -> Result<Arc<RunRecord>, ApiError> {
        let table = self.table.lock().expect("the run table is never poisoned");
        table
            .by_id
            .get(id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("find run `{id}`: no such run (ids come from POST /v1/runs)")))
    }

    /// Records that run `id` finished, and forgets the oldest finished
    /// runs past `--keep-runs`, removing the results directories this
    /// server made for them (and nothing else: another server's runs in
    /// the same folder are its own).
    fn finished(&self, id: &str) {
        let forgotten: Vec<String> = {
            let mut table = self.table.lock().expect("the run table is never poisoned");
            table.finished.push_back(id.to_owned());
            let mut forgotten = Vec::new();
            while table.finished.len() > self.limits.keep_runs {
                if let Some(old) = table.finished.pop_front() {
                    table.by_id.remove(&old);
                    forgotten.push(old);
                }
            }
            forgotten
        };
        for old in forgotten {
            let _ = std::fs::remove_dir_all(self.results.join(old));
        }
    }
}

/// `POST /v1/runs`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Cases given inline.
    #[serde(default)]
    cases: Vec<InlineCaseText>,
    /// Case files, directories and suites under the root.
    #[serde(default)]
    paths: Vec<String>,
    /// Only the cases whose id contains this (or matches it as a regex).
    filter: Option<String>,
    /// How many samples may be in flight at once.
    jobs: Option<usize>,
    /// Overrides every case's timeout, in seconds.
    timeout_secs: Option<f64>,
}

/// One case given inline.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InlineCaseText {
    /// Its id (default `inline/N`).
    name: Option<String>,
    /// The case file's text (HOCON or JSON).
    text: String,
}

/// `POST /v1/runs`: 202 and `{"id", "results"}` once the run has started;
/// 400 when a case cannot be read or a path is outside the root, 429 when
/// as many runs as allowed are running.
pub async fn start(
    State(shared): State<AppState>,
    JsonBody(request): JsonBody<RunRequest>,
) -> Result<Response, ApiError> {
    let Ok(slot) = shared.runs.slots.clone().try_acquire_owned() else {
        let message = format!(
            "start a run: {} runs are running, as many as --max-runs allows; retry when one has finished",
            shared.runs.limits.max_runs
        );
        return Err(ApiError::new(StatusCode::TOO_MANY_REQUESTS, message));
    };
    let work = shared.clone();
    let record = blocking_while_wanted(move |given_up| prepare_and_start(&work, request, slot, given_up)).await??;
    let body = json!({ "id": record.id, "status": "running", "results": record.results });
    let mut response = json_response(&shared.redactor, &body)?;
    *response.status_mut() = StatusCode::ACCEPTED;
    Ok(response)
}

/// Reads the request's cases, makes the results directory and starts the
/// run on a thread of its own.
fn prepare_and_start(
    shared: &Arc<Shared>,
    request: RunRequest,
    slot: OwnedSemaphorePermit,
    given_up: &AtomicBool,
) -> Result<Arc<RunRecord>, ApiError> {
    let project = &shared.project;
    if request.cases.is_empty() && request.paths.is_empty() {
        return Err(ApiError::bad_request(
            "start a run: it names no case; give `cases` (inline case files) or `paths` (under the served root)",
        ));
    }
    let limits = shared.runs.limits;
    let mut options = RunOptions { jobs: limits.max_jobs, ..RunOptions::default() };
    if let Some(jobs) = request.jobs {
        if !(1..=limits.max_jobs).contains(&jobs) {
            return Err(ApiError::bad_request(format!(
                "start a run: `jobs` {jobs} is not from 1 to {}, this server's --jobs",
                limits.max_jobs
            )));
        }
        options.jobs = jobs;
    }
    if let Some(seconds) = request.timeout_secs {
        let timeout = Duration::try_from_secs_f64(seconds).ok().filter(|t| !t.is_zero());
        let length = timeout.ok_or_else(|| {
            ApiError::bad_request(format!("start a run: `timeout_secs` {seconds} is not a positive number of seconds"))
        })?;
        options.sample_timeout = Some(RunTimeout { length, set_by: "`timeout_secs`" });
    }
    // Inline cases see no environment: a client is not the server's user.
    let mut inline: Vec<PendingCase> = Vec::new();
    for (i, case) in request.cases.into_iter().enumerate() {
        inline.push(Box::new(InlineCase::read(i, case)?));
    }
    let filter = request.filter.as_deref().map(CaseFilter::new);
    if let Some(filter) = &filter {
        inline.retain(|case| filter.matches(case.id()));
    }
    let discovered = match request.paths.is_empty() {
        true => Vec::new(),
        false => match project.discover_within(&shared.runs.root, &request.paths, filter.as_ref()) {
            Ok(found) => found,
            Err(ProjectError::NoCaseMatches { .. }) if !inline.is_empty() => Vec::new(),
            Err(ProjectError::ServedRoot { message, .. }) => {
                return Err(ApiError::internal(format!("start a run: the served root cannot be opened: {message}")));
            }
            Err(e) => return Err(ApiError::bad_request(format!("start a run: {e}"))),
        },
    };
    if let Some(text) = &request.filter
        && inline.is_empty()
        && discovered.iter().all(|found| found.is_empty())
    {
        return Err(ApiError::bad_request(format!("start a run: no case's id matches the filter `{text}`")));
    }
    let count = inline.len() + discovered.iter().map(|found| found.len()).sum::<usize>();
    let mut distinct = DistinctIds::default();
    let stream = inline.into_iter().chain(discovered.into_iter().flatten()).map(move |case| distinct.admit(case));
    let internal = |e: &dyn std::fmt::Display| ApiError::internal(format!("start a run: {e}"));
    let cases = project.cases(PendingCases::new(count, stream), None).map_err(|e| internal(&e))?;
    let runner = project.runner(options).map_err(|e| internal(&e))?;

    // A request answered 504 while its cases were read starts no run: its
    // client would never learn the run's id, to follow or stop it.
    if given_up.load(Ordering::Relaxed) {
        return Err(ApiError::new(StatusCode::GATEWAY_TIMEOUT, "start a run: the request was given up"));
    }
    let id = new_run_id();
    let dir = shared.runs.results.join(&id);
    let results = ResultsDir::create(&dir).map_err(|e| internal(&e))?;
    let events = crate::private_files::create(&dir.join(EVENTS_FILE)).map_err(|e| internal(&e))?;
    let (changed, _) = watch::channel(0);
    let (stop, mut stopped) = watch::channel(None);
    let log = Mutex::new(RunLog { file: Some(events), ..RunLog::default() });
    let record = Arc::new(RunRecord { id: id.clone(), results: dir, log, changed, stop });
    shared.runs.table.lock().expect("the run table is never poisoned").by_id.insert(id.clone(), record.clone());

    // Ends the record however the run ends (a panic, or no thread to run
    // it, included), so that no client waits for events forever.
    let ending = Ending { run: Some((record.clone(), shared.clone())) };
    let redactor = shared.redactor.clone();
    let mut log = EventLog { record: record.clone(), redactor: redactor.clone() };
    let run_timeout = limits.run_timeout;
    let run = move || {
        let _slot = slot;
        let mut reporters = ReporterSet::builder().results_dir(results).redactor(redactor).reporter(&mut log).build();
        let stop = || async move {
            let asked = async { stopped.wait_for(Option::is_some).await.ok().and_then(|reason| reason.clone()) };
            tokio::select! {
                Some(reason) = asked => reason,
                () = tokio::time::sleep(run_timeout) => format!(
                    "it ran past this server's --run-timeout of {}",
                    crate::plural::count(run_timeout.as_secs() as usize, "second")
                ),
            }
        };
        let summary = runner.run_blocking_until(cases, &mut reporters, stop);
        drop(reporters);
        ending.finish(Some(&summary));
    };
    std::thread::Builder::new()
        .name(format!("assay-serve-run-{id}"))
        .spawn(run)
        .map_err(|e| ApiError::internal(format!("start a run: no thread for it: {e}")))?;
    Ok(record)
}

/// A run id: 16 random hex digits, so that one client cannot guess
/// another's.
fn new_run_id() -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the system has randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A case given inline: read when the request comes (to refuse a bad one),
/// and again when its turn comes, as a case file is.
#[derive(Debug)]
struct InlineCase {
    id: String,
    /// What errors name as its file.
    file: PathBuf,
    text: String,
}

impl InlineCase {
    fn read(index: usize, inline: InlineCaseText) -> Result<InlineCase, ApiError> {
        let id = inline.name.unwrap_or_else(|| format!("inline/{index}"));
        let file = PathBuf::from(format!("cases[{index}]"));
        parse_case(&inline.text, &id, &file, &CaseEnv::empty()).map_err(|e| {
            let why = match e.to_string().contains("environment variable") {
                true => " (an inline case sees no environment variable: a client is not the server's user)",
                false => "",
            };
            ApiError::bad_request(format!("read the inline case `{id}`: {e}{why}"))
        })?;
        Ok(InlineCase { id, file, text: inline.text })
    }
}

impl CaseReader for InlineCase {
    fn id(&self) -> &str {
        &self.id
    }

    fn source(&self) -> &Path {
        &self.file
    }

    fn load(&self, keys: &dyn KeySet, _env: &CaseEnv) -> LoadedCase {
        let planned = parse_case(&self.text, &self.id, &self.file, &CaseEnv::empty()).and_then(|case| {
            let plan = plan_case(&case, keys).map_err(|kind| crate::errors::CaseError::new(&self.file, kind))?;
            Ok((case, plan))
        });
        match planned {
            Ok((case, plan)) => LoadedCase::Ready(Box::new(Job::from_case(case, plan))),
            Err(error) => LoadedCase::Broken { id: self.id.clone(), error },
        }
    }
}

/// Writes every event of a run, redacted, to its `events.jsonl`, for its
/// event streams.
struct EventLog {
    record: Arc<RunRecord>,
    redactor: Redactor,
}

impl Reporter for EventLog {
    fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
        let elapsed_ms = event.elapsed.as_secs_f64() * 1000.0;
        let (name, body) = match event.kind {
            EventKind::RunStarted { cases } => ("run_started", json!({ "cases": cases })),
            EventKind::CaseStarted { id } => ("case_started", json!({ "id": id })),
            EventKind::SampleFinished { case, index, passed, duration } => (
                "sample_finished",
                json!({ "case": case, "index": index, "passed": passed, "duration_ms": duration.as_secs_f64() * 1000.0 }),
            ),
            EventKind::CaseSlow { id, running } => {
                ("case_slow", json!({ "id": id, "running_ms": running.as_secs_f64() * 1000.0 }))
            }
            EventKind::CaseFinished(case) => ("case_finished", json!({ "case": case })),
            EventKind::RunFinished(summary) => ("run_finished", json!({ "summary": summary })),
        };
        let mut body = body;
        body["event"] = json!(name);
        body["elapsed_ms"] = json!(elapsed_ms);
        let mut line = self.redactor.to_json(&body, false)?;
        // A case's whole line can be tens of MiB, which every client
        // streaming the events would hold at once: the event then says how
        // the case ended, and `results.jsonl` has the rest.
        if let EventKind::CaseFinished(case) = event.kind
            && line.len() > MAX_EVENT_LINE_BYTES
        {
            let brief =
                json!({ "id": case.id, "status": case.status, "error": case.error, "duration_ms": case.duration_ms });
            let why = format!(
                "its line is {} bytes, over the {} KiB an event may be: read it from results.jsonl",
                line.len(),
                MAX_EVENT_LINE_BYTES >> 10
            );
            let body = json!({ "case": brief, "case_left_out": why, "event": name, "elapsed_ms": elapsed_ms });
            line = self.redactor.to_json(&body, false)?;
        }
        line.push(b'\n');
        {
            let mut log = self.record.log.lock().expect("a run's log is never poisoned");
            let file = log.file.as_mut().ok_or_else(|| std::io::Error::other("the run's event log is closed"))?;
            file.write_all(&line).map_err(|e| std::io::Error::other(format!("write {EVENTS_FILE}: {e}")))?;
            log.written += line.len() as u64;
        }
        self.record.changed.send_modify(|n| *n += 1);
        Ok(())
    }
}

/// Ends a run's record when dropped: with the summary when the run
/// finished, else (its thread panicked) with an error in its place.
struct Ending {
    run: Option<(Arc<RunRecord>, Arc<Shared>)>,
}

impl Ending {
    fn finish(mut self, summary: Option<&RunSummary>) {
        if let Some((record, shared)) = self.run.take() {
            close(&record, &shared, summary);
        }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        if let Some((record, shared)) = self.run.take() {
            close(&record, &shared, None);
        }
    }
}

/// Marks `record` finished with its summary: `summary.json` as written,
/// else the run's own, else (no summary: the run's thread panicked) an
/// error in its place.
fn close(record: &RunRecord, shared: &Shared, summary: Option<&RunSummary>) {
    let from_file = std::fs::read(record.results.join(crate::report::SUMMARY_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    let summary = match (from_file, summary) {
        (Some(file), _) => file,
        (None, Some(summary)) => {
            let text = shared.redactor.to_json(summary, false).unwrap_or_default();
            serde_json::from_slice(&text).unwrap_or(Value::Null)
        }
        (None, None) => json!({ "internal_errors": ["the run stopped before it finished (assay's own bug)"] }),
    };
    {
        let mut log = record.log.lock().expect("a run's log is never poisoned");
        log.summary = Some(summary);
        log.file = None;
    }
    record.changed.send_modify(|n| *n += 1);
    shared.runs.finished(&record.id);
}

/// `GET /v1/runs/{id}`: `{"id", "status": "running" | "finished",
/// "results", "summary"}` (the summary once finished: `summary.json`).
pub async fn status(State(shared): State<AppState>, UrlPath(id): UrlPath<String>) -> Result<Response, ApiError> {
    let record = shared.runs.get(&id)?;
    let summary = record.log.lock().expect("a run's log is never poisoned").summary.clone();
    let status = if summary.is_some() { "finished" } else { "running" };
    let body = json!({ "id": record.id, "status": status, "results": record.results, "summary": summary });
    json_response(&shared.redactor, &body)
}

/// `GET /v1/runs/{id}/events`: every event of the run as server-sent
/// events (`event:` its name, `data:` its JSON), from the first, ending
/// when the run has ended. Read from the run's `events.jsonl`, up to the
/// last whole line written, a few hundred at a time.
pub async fn events(State(shared): State<AppState>, UrlPath(id): UrlPath<String>) -> Result<Response, ApiError> {
    let record = shared.runs.get(&id)?;
    let file = tokio::fs::File::open(record.results.join(EVENTS_FILE))
        .await
        .map_err(|e| ApiError::internal(format!("read the events of run `{id}`: {e}")))?;
    let changes = record.changed.subscribe();
    let reader = EventReader { file: tokio::io::BufReader::new(file), offset: 0 };
    let stream =
        futures_util::stream::unfold((record, changes, reader), |(record, mut changes, mut reader)| async move {
            loop {
                changes.borrow_and_update();
                let (written, ended) = {
                    let log = record.log.lock().expect("a run's log is never poisoned");
                    (log.written, log.summary.is_some())
                };
                if reader.offset < written {
                    let events = reader.read(written).await;
                    if events.is_empty() {
                        return None;
                    }
                    return Some((futures_util::stream::iter(events), (record, changes, reader)));
                }
                if ended {
                    return None;
                }
                // The sender lives in the record, so this ends only by a change.
                if changes.changed().await.is_err() {
                    return None;
                }
            }
        });
    let stream = futures_util::StreamExt::flatten(stream);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}

/// Reads a run's `events.jsonl` from where the last read stopped.
struct EventReader {
    file: tokio::io::BufReader<tokio::fs::File>,
    offset: u64,
}

impl EventReader {
    /// The next events, up to [`EVENTS_PER_READ`], of the lines before
    /// `written`; none when the file cannot be read (the stream then ends).
    async fn read(&mut self, written: u64) -> Vec<Result<Event, Infallible>> {
        use tokio::io::AsyncBufReadExt;
        let mut events = Vec::new();
        let mut line = Vec::new();
        let mut bytes = 0;
        while self.offset < written && events.len() < EVENTS_PER_READ && bytes < BYTES_PER_READ {
            line.clear();
            match self.file.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    self.offset += read as u64;
                    bytes += read;
                }
            }
            let text = String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(&line));
            let name = serde_json::from_str::<Named>(&text).map(|named| named.event).unwrap_or_default();
            events.push(Ok(Event::default().event(name).data(text)));
        }
        events
    }
}

/// An event line's name.
#[derive(Deserialize)]
struct Named {
    event: String,
}

/// `DELETE /v1/runs/{id}`: stops a running run (each case in flight is
/// reported as `stopped`, the cases not started as not run) and answers
/// 202 `{"id", "status": "stopping"}`; a finished run answers 200 as `GET`
/// does.
pub async fn stop(State(shared): State<AppState>, UrlPath(id): UrlPath<String>) -> Result<Response, ApiError> {
    let record = shared.runs.get(&id)?;
    let finished = record.log.lock().expect("a run's log is never poisoned").summary.is_some();
    if finished {
        return status(State(shared), UrlPath(id)).await;
    }
    record.stop.send_if_modified(|reason| {
        let first = reason.is_none();
        if first {
            *reason = Some(format!("its client cancelled it (DELETE /v1/runs/{id})"));
        }
        first
    });
    let body = json!({ "id": record.id, "status": "stopping", "results": record.results });
    let mut response = json_response(&shared.redactor, &body)?;
    *response.status_mut() = StatusCode::ACCEPTED;
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_random_hex() {
        let (a, b) = (new_run_id(), new_run_id());
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
