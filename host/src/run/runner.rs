//! The [`Runner`] and its [`RunOptions`]: cases admitted as the run goes,
//! each case's samples under the concurrency limit (or on the run's CPU
//! threads), cancellation, and the events of the run in order.

use crate::agent::Agents;
use crate::case::Connection;
use crate::errors::{CaseErrorKind, ErrorKind};
use crate::job::{
    CaseResult, CaseSource, CaseStatus, Job, LoadedCase, MAX_KEPT_ANSWER_BYTES, Replay, RunError, SampleResult,
};
use crate::plugin::Registry;
use crate::run::panic_message::panic_payload_message;
use super::batched_permits::BatchedPermits;
use super::conversation::{Context, Work, converse, millis};
use super::cpu_threads::CpuThreads;
use super::slow::SlowWatch;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use super::timeout::Deadline;
use super::{DEFAULT_CASE_TIMEOUT, EventKind, Reporter, RunEvent, RunSummary, RunTimeout};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// How a run runs.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// How many samples may be in flight at once (default: CPUs × 4, since
    /// agents are I/O-bound).
    pub jobs: usize,
    /// Overrides every case's `timeout_in_seconds` (the bound on a
    /// sample's whole time, streaming included).
    pub sample_timeout: Option<RunTimeout>,
    /// The bound on a sample whose case sets no `timeout_in_seconds` and
    /// the run none either (default `DEFAULT_CASE_TIMEOUT`; `[cases]
    /// timeout_in_seconds` of assay.toml sets it).
    pub default_timeout: Duration,
    /// Runs every one of a case's `n` samples, with no early stopping (the
    /// Assessor's mode); the status is decided the same way.
    pub exhaustive: bool,
    /// A case running longer than this is reported slow
    /// ([`EventKind::CaseSlow`]), and again at each further multiple
    /// (default 60 s; `None`: never).
    pub slow_timeout: Option<Duration>,
    /// Answers every case from this results directory's recording instead
    /// of asking its agent (`assay run --replay DIR`): each case gets the
    /// recording of its id, and a case with none is an error.
    pub replay: Option<Arc<Replay>>,
    /// The most samples one case may ask for (`n` of its `success_ratio`,
    /// after `--samples`): a case asking more is an error case, never run
    /// (default `DEFAULT_MAX_SAMPLES`; `[cases] max_samples` in
    /// assay.toml raises it, a case file cannot).
    pub max_samples: u32,
    /// The most checks one case may plan, over all its interactions (a list
    /// `expected` is a check per element): a case planning more is an error
    /// case, never run (default `DEFAULT_MAX_CHECKS`; `[cases]
    /// max_checks` in assay.toml raises it).
    pub max_checks: usize,
    /// Stops admitting cases once this many have failed or errored
    /// (`--fail-fast` is 1, `--max-fail N`): the cases in flight finish and
    /// are reported, those not started are counted as not run, and the
    /// summary's `stopped` says why (default: never).
    pub max_fail: Option<usize>,
}

/// The most samples a case may ask for, unless assay.toml says otherwise: a
/// 150-byte case asking for `"1/4000000000"` must not take the machine.
pub const DEFAULT_MAX_SAMPLES: u32 = 1000;

/// The most checks a case may plan, unless assay.toml says otherwise: 20 MB
/// of case files listing a million expected values must not write a
/// gigabyte of results.
pub const DEFAULT_MAX_CHECKS: usize = 1000;

/// How long a case runs before it is reported slow, by default (nextest's).
pub const DEFAULT_SLOW_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for RunOptions {
    fn default() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        RunOptions {
            jobs: cpus * 4,
            sample_timeout: None,
            default_timeout: DEFAULT_CASE_TIMEOUT,
            exhaustive: false,
            slow_timeout: Some(DEFAULT_SLOW_TIMEOUT),
            replay: None,
            max_samples: DEFAULT_MAX_SAMPLES,
            max_checks: DEFAULT_MAX_CHECKS,
            max_fail: None,
        }
    }
}

/// The error case of a job asking for more samples than `max` allows.
fn too_many_samples(job: &Job, max: u32) -> LoadedCase {
    let kind = CaseErrorKind::Invalid {
        path: "success_ratio".into(),
        message: format!(
            "`{}` asks for {} samples, over the cap of {max} a run allows; ask for fewer, or raise the cap in \
             assay.toml: [cases] max_samples = {}",
            job.success_ratio, job.success_ratio.samples, job.success_ratio.samples
        ),
    };
    LoadedCase::Broken { id: job.id.clone(), error: crate::errors::CaseError::new(&job.file, kind) }
}

/// The error case of a job planning more checks than `max` allows.
fn too_many_checks(job: &Job, checks: usize, max: usize) -> LoadedCase {
    let kind = CaseErrorKind::Invalid {
        path: "interactions".into(),
        message: format!(
            "its interactions plan {checks} checks (a list `expected` is a check per element), over the cap of \
             {max} a case may plan; check less, or raise the cap in assay.toml: [cases] max_checks = {checks}"
        ),
    };
    LoadedCase::Broken { id: job.id.clone(), error: crate::errors::CaseError::new(&job.file, kind) }
}

/// Runs test cases against agents and reports as it goes.
pub struct Runner {
    context: Context,
    options: RunOptions,
}

impl Runner {
    /// A runner checking responses with `registry`'s matchers.
    pub fn new(registry: Arc<Registry>, agents: Agents, options: RunOptions) -> Runner {
        Runner { context: Context { agents, registry, cpu: Arc::new(CpuThreads::per_cpu()) }, options }
    }

    /// Runs every case and reports each as it finishes. Never fails: bad
    /// files, dead agents and faulty plugins are results, and a case whose
    /// task panicked is an `error` case. An error from `reporter` cancels
    /// the run: no further case is started, the cases in flight finish and
    /// are reported, and the summary names the error and counts the cases
    /// not run. Before it finishes, the run checks that every case it
    /// admitted was reported exactly once; a breach is named in the
    /// summary's `internal_errors` and fails the run.
    pub async fn run(&self, cases: CaseSource, reporter: &mut dyn Reporter) -> RunSummary {
        self.run_until(cases, reporter, std::future::pending()).await
    }

    /// [`Runner::run`], stopped when `stop` ends, with the reason it gives
    /// (its client cancelled it, its time is up): no further case is
    /// started, each case in flight is stopped and reported as a `stopped`
    /// error naming the reason (one running in-process on a CPU thread
    /// finishes first, within its deadlines), the cases never started are
    /// counted as not run, and the summary's `stopped` says why.
    pub async fn run_until(
        &self,
        cases: CaseSource,
        reporter: &mut dyn Reporter,
        stop: impl Future<Output = String>,
    ) -> RunSummary {
        let mut stop = std::pin::pin!(stop);
        let (stopping, stopped) = watch::channel(None::<Arc<str>>);
        let cancelled = Arc::new(AtomicBool::new(false));
        let mut emitter =
            Emitter { reporter, started: Instant::now(), errors: Vec::new(), cancelled: cancelled.clone() };
        let expected = cases.len();
        let yielded = cases.yielded();
        emitter.emit(EventKind::RunStarted { cases: expected });
        let (sender, mut receiver) = mpsc::unbounded_channel();
        // Each run counts its plugins' faults on its own: a plugin disabled
        // in one run is enabled in the next.
        let context = Context { registry: Arc::new(self.context.registry.for_new_scope()), ..self.context.clone() };
        let admission = tokio::spawn(admit(context, self.options.clone(), cases, sender, cancelled.clone(), stopped));
        let mut summary = RunSummary::default();
        let mut ledger = Ledger::default();
        let mut slow = SlowWatch::new(self.options.slow_timeout);
        loop {
            // The stop first: a run whose cases report without pause must
            // still hear it.
            let message = tokio::select! {
                biased;
                reason = &mut stop, if summary.stopped.is_none() => {
                    cancelled.store(true, Ordering::Release);
                    let _ = stopping.send(Some(reason.as_str().into()));
                    summary.stopped = Some(reason);
                    continue;
                }
                message = receiver.recv() => match message {
                    Some(message) => message,
                    None => break,
                },
                () = slow.next() => {
                    for (id, running) in slow.due() {
                        emitter.emit(EventKind::CaseSlow { id: &id, running });
                    }
                    continue;
                }
            };
            match message {
                Admission::Started { seq, id } => {
                    emitter.emit(EventKind::CaseStarted { id: &id });
                    slow.started(seq, &id);
                    ledger.started(id);
                }
                Admission::Sample { case, index, passed, duration } => {
                    emitter.emit(EventKind::SampleFinished { case: &case, index, passed, duration });
                }
                Admission::Finished { seq, result, place: _reported, unannounced } => {
                    if let Some(sample) = unannounced.and_then(|index| result.samples.iter().find(|s| s.index == index))
                    {
                        let duration = sample_duration(sample);
                        let (index, passed) = (sample.index, sample.passed);
                        emitter.emit(EventKind::SampleFinished { case: &result.id, index, passed, duration });
                    }
                    slow.finished(seq);
                    ledger.finished(&result.id);
                    summary.add(&result);
                    emitter.emit(EventKind::CaseFinished(&result));
                    if let Some(max) = self.options.max_fail
                        && summary.failed + summary.errors >= max
                        && summary.stopped.is_none()
                    {
                        cancelled.store(true, Ordering::Release);
                        let failed = crate::plural::count(summary.failed + summary.errors, "case");
                        summary.stopped = Some(format!("{failed} failed or errored, and --max-fail is {max}"));
                    }
                }
            }
        }
        if let Err(error) = admission.await {
            ledger.errors.push(format!("the scheduler stopped: {}", panic_message(error)));
        }
        drop(stopping);
        // A cancelled run admits fewer cases than it holds, by design: those
        // are counted as not run, not as the scheduler's breach.
        if cancelled.load(Ordering::Acquire) {
            summary.not_run = expected.saturating_sub(ledger.admitted);
        }
        // Every case the source yielded is due: the count it was made with
        // is what the files held before the run (see `PendingCases::new`).
        let due = match cancelled.load(Ordering::Acquire) {
            true => ledger.admitted,
            false => yielded.get().copied().unwrap_or(expected),
        };
        summary.internal_errors = ledger.close(due);
        summary.duration_ms = millis(emitter.started.elapsed());
        // What failed before the end is in the summary the reporters see
        // (`summary.json` shows it); what fails at the end is added after.
        summary.reporter_errors = emitter.errors.clone();
        emitter.emit(EventKind::RunFinished(&summary));
        summary.reporter_errors = emitter.errors;
        summary
    }

    /// [`Runner::run`] on a runtime of its own, for callers without one.
    pub fn run_blocking(&self, cases: CaseSource, reporter: &mut dyn Reporter) -> RunSummary {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
        runtime.block_on(self.run(cases, reporter))
    }

    /// [`Runner::run_until`] on a runtime of its own, for callers without
    /// one; `stop` is made on that runtime.
    pub fn run_blocking_until<F: Future<Output = String>>(
        &self,
        cases: CaseSource,
        reporter: &mut dyn Reporter,
        stop: impl FnOnce() -> F,
    ) -> RunSummary {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
        runtime.block_on(async { self.run_until(cases, reporter, stop()).await })
    }
}

/// The reporter as the run sees it: each event stamped with the time since
/// the run started; each error kept for the summary, and the run cancelled.
struct Emitter<'r> {
    reporter: &'r mut dyn Reporter,
    started: Instant,
    errors: Vec<String>,
    cancelled: Arc<AtomicBool>,
}

impl Emitter<'_> {
    fn emit(&mut self, kind: EventKind<'_>) {
        let event = RunEvent { elapsed: self.started.elapsed(), kind };
        if let Err(error) = self.reporter.report(&event) {
            self.errors.push(error.to_string());
            self.cancelled.store(true, Ordering::Release);
        }
    }
}

/// What the scheduler tells the run about a case. `seq` numbers the cases
/// in the order they are admitted (ids may repeat in an embedder's cases).
enum Admission {
    /// The case is admitted: it must be reported exactly once.
    Started { seq: u64, id: String },
    /// One of its samples is decided.
    Sample { case: String, index: u32, passed: bool, duration: Duration },
    /// The case is decided. It holds its place among the cases in flight
    /// until the run has reported it, so that slow reporters hold back
    /// admission (and a cancellation stops the run within the cases in
    /// flight, not after a backlog). `unannounced` is the index of a
    /// sample not announced on its own (an in-process case's last: one
    /// wake-up of the run fewer per case), announced now.
    Finished { seq: u64, result: CaseResult, place: OwnedSemaphorePermit, unannounced: Option<u32> },
}

/// How long `sample` took, as the run's events say it.
fn sample_duration(sample: &SampleResult) -> Duration {
    Duration::from_secs_f64(sample.duration_ms / 1e3)
}

/// Checks that every admitted case is reported exactly once.
#[derive(Default)]
struct Ledger {
    /// Admitted and not yet reported (a count: ids are unique by discovery,
    /// but an embedder's cases may repeat one).
    open: HashMap<String, usize>,
    admitted: usize,
    errors: Vec<String>,
}

impl Ledger {
    fn started(&mut self, id: String) {
        self.admitted += 1;
        *self.open.entry(id).or_default() += 1;
    }

    fn finished(&mut self, id: &str) {
        match self.open.get_mut(id) {
            Some(1) => {
                self.open.remove(id);
            }
            Some(count) => *count -= 1,
            None => self.errors.push(format!("case `{id}` was reported more often than it was admitted")),
        }
    }

    /// The breaches, once the run is over and `expected` cases were due.
    fn close(mut self, expected: usize) -> Vec<String> {
        let mut never: Vec<&String> = self.open.keys().collect();
        never.sort();
        for id in never {
            self.errors.push(format!("case `{id}` was admitted but never reported"));
        }
        if self.admitted < expected {
            self.errors
                .push(format!("{} of {expected} cases were never admitted to the run", expected - self.admitted));
        }
        self.errors
    }
}

/// The message of a task that panicked (or was cancelled).
fn panic_message(error: tokio::task::JoinError) -> String {
    if error.is_cancelled() {
        return "its task was cancelled".to_owned();
    }
    panic_payload_message(error.into_panic())
}

/// Cases in flight (read and started, not yet reported) per sample slot:
/// enough to keep every slot busy, few enough to keep memory flat.
const CASES_PER_SLOT: usize = 2;

/// Cases whose guest sleeps in WASI that may have given their place among
/// the cases in flight back (see [`SwapAtPark`]): each holds a thread while
/// it sleeps, so they are bounded too, by this.
const PARKED_CASES: usize = 256;

/// The place among the cases in flight of a case running in-process.
struct Place {
    permit: std::sync::Mutex<Option<OwnedSemaphorePermit>>,
    parked_places: Arc<Semaphore>,
}

impl Place {
    /// The place the case holds now, taken to go with its result.
    fn take(&self) -> OwnedSemaphorePermit {
        self.permit.lock().unwrap_or_else(|e| e.into_inner()).take().expect("a place is taken once")
    }
}

/// Dropped when the case's guest first parks (given to
/// `cpu_threads::hold_slot` with the sample slot), it swaps the case's
/// place among the cases in flight for one of the [`PARKED_CASES`], while
/// there is one, so that sleeping cases do not keep the next ones out; a
/// case whose place was taken at its end is left alone.
struct SwapAtPark(Arc<Place>);

impl Drop for SwapAtPark {
    fn drop(&mut self) {
        let mut permit = self.0.permit.lock().unwrap_or_else(|e| e.into_inner());
        if permit.is_some()
            && let Ok(parked) = self.0.parked_places.clone().try_acquire_owned()
        {
            *permit = Some(parked);
        }
    }
}

/// Starts each case as the source yields it, with at most a bounded number
/// in flight, and sends each result as its case is decided. A direct agent
/// and the plugins of a case's checks are compiled the first time a case
/// needs them, at once, before that case starts, so that no request's or
/// check's deadline pays for compilation. A replay gives each
/// case its recording, and ends a case it has none for with that error.
/// Once `cancelled` is set, it starts no further case (one read while it
/// waited included).
async fn admit(
    context: Context,
    options: RunOptions,
    mut cases: CaseSource,
    results: mpsc::UnboundedSender<Admission>,
    cancelled: Arc<AtomicBool>,
    stopped: watch::Receiver<Option<Arc<str>>>,
) {
    let mut places = Places::new(&context, &options);
    let mut prepared: HashSet<String> = HashSet::new();
    for seq in 0.. {
        if cancelled.load(Ordering::Acquire) {
            break;
        }
        let Some(case) = cases.next().await else { break };
        let mut case = within_caps(case, &options);
        let judge_checks = match &case {
            LoadedCase::Ready(job) if places.judge_concurrency > 0 => job.judge_checks(&context.registry),
            _ => 0,
        };
        let waits_on_judge = judge_checks > 0;
        let permit = places.in_flight(judge_checks).await;
        if cancelled.load(Ordering::Acquire) {
            break;
        }
        let unrecorded = attach_recording(&mut case, options.replay.as_deref());
        // An in-process case waits for its sample slot before it is
        // admitted, so that a cancellation while it waits still stops it.
        // One with a prerequisite, the judge or an embeddings backend to
        // wait for runs as a task instead, so that no slot and no CPU
        // thread is held while it waits.
        let checks_wait = matches!(&case, LoadedCase::Ready(job) if job.asks_network(&context.registry));
        let in_process = match &case {
            LoadedCase::Ready(job) => unrecorded.is_none() && !checks_wait && runs_on_cpu_thread(job),
            LoadedCase::Broken { .. } => false,
        };
        let slot = places.sample_slot(in_process).await;
        if cancelled.load(Ordering::Acquire) {
            break;
        }
        let _ = results.send(Admission::Started { seq, id: case.id().to_owned() });
        let job = match case {
            LoadedCase::Broken { id, error } => {
                let _ = results.send(Admission::Finished {
                    seq,
                    result: broken(id, error),
                    place: permit,
                    unannounced: None,
                });
                continue;
            }
            LoadedCase::Ready(job) => *job,
        };
        if let Some(error) = unrecorded {
            let _ = results.send(Admission::Finished {
                seq,
                result: Identity::of(&job).failed(error),
                place: permit,
                unannounced: None,
            });
            continue;
        }
        let asks_direct = job.recording.is_none() && job.connections.contains(&Connection::Direct);
        let agent = (asks_direct && prepared.insert(job.agent.clone())).then(|| job.agent.clone());
        let keys = job.turns.iter().flat_map(|turn| &turn.checks).map(|check| check.key.as_str());
        tokio::join!(context.agents.prepare(agent), context.registry.prepare(keys));
        let task = CaseTask {
            context: context.clone(),
            job: Arc::new(job),
            semaphore: places.samples.clone(),
            waits_on_judge,
            checks_wait,
            sample_timeout: options.sample_timeout,
            default_timeout: options.default_timeout,
            exhaustive: options.exhaustive,
            max_in_flight: options.jobs.max(1),
            stopped: stopped.clone(),
            events: results.clone(),
        };
        // Every case is reported: a case whose task panicked is reported as
        // an error, never lost.
        match slot {
            Some(slot) => start_on_cpu_thread(task, seq, slot, permit, places.parked_places.clone()),
            None => start_task(task, seq, permit, stopped.clone()),
        }
    }
}

/// The places a case holds while the run admits it and runs it.
struct Places {
    /// The run's sample slots (`-j`).
    samples: Arc<Semaphore>,
    /// In-process cases take their slots here, waited for a few at a time
    /// (half of them, at most two per CPU): the cases queued meanwhile keep
    /// the CPU threads busy.
    in_process_slots: BatchedPermits,
    /// Places of the cases admitted and not yet reported.
    in_flight: Arc<Semaphore>,
    /// Places of the in-process cases parked on a CPU thread.
    parked_places: Arc<Semaphore>,
    /// Cases whose checks wait on the judge have places of their own, one
    /// per check they ask at once (up to the judge's concurrency), enough
    /// to keep every request the judge allows in flight and no more waiting
    /// than that again: a case waiting on the network holds no sample slot
    /// meanwhile (see `CaseTask::sample`).
    judge_in_flight: Arc<Semaphore>,
    /// The judge's concurrency (0: no judge).
    judge_concurrency: usize,
}

impl Places {
    fn new(context: &Context, options: &RunOptions) -> Places {
        let samples = Arc::new(Semaphore::new(options.jobs.max(1)));
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let judge_concurrency = context.registry.judge_concurrency().unwrap_or(0);
        Places {
            in_process_slots: BatchedPermits::new(samples.clone(), (options.jobs / 2).min(2 * cpus)),
            samples,
            in_flight: Arc::new(Semaphore::new(options.jobs.max(1) * CASES_PER_SLOT)),
            parked_places: Arc::new(Semaphore::new(PARKED_CASES)),
            judge_in_flight: Arc::new(Semaphore::new(judge_concurrency * CASES_PER_SLOT)),
            judge_concurrency,
        }
    }

    /// A case's place in flight: among those waiting on the judge when it
    /// asks `judge_checks` of it, among the others otherwise.
    async fn in_flight(&self, judge_checks: usize) -> OwnedSemaphorePermit {
        let permit = match judge_checks > 0 {
            true => {
                let places = judge_checks.min(self.judge_concurrency) as u32;
                self.judge_in_flight.clone().acquire_many_owned(places).await
            }
            false => self.in_flight.clone().acquire_owned().await,
        };
        permit.expect("the semaphore is never closed")
    }

    /// An in-process case's sample slot; `None` for a case run as a task,
    /// which takes its slots from the semaphore itself (none may wait on
    /// slots held back here).
    async fn sample_slot(&mut self, in_process: bool) -> Option<OwnedSemaphorePermit> {
        match in_process {
            true => Some(self.in_process_slots.one().await),
            false => {
                self.in_process_slots.give_back();
                None
            }
        }
    }
}

/// `case`, or the error case it is when it asks for more samples or plans
/// more checks than the run allows.
fn within_caps(case: LoadedCase, options: &RunOptions) -> LoadedCase {
    let LoadedCase::Ready(job) = &case else { return case };
    if job.success_ratio.samples > options.max_samples {
        return too_many_samples(job, options.max_samples);
    }
    let checks = job.turns.iter().map(|turn| turn.checks.len()).sum::<usize>();
    if checks > options.max_checks {
        return too_many_checks(job, checks, options.max_checks);
    }
    case
}

/// Gives a replayed case its recording (and its group's members theirs):
/// the error of a case the replay has none of.
fn attach_recording(case: &mut LoadedCase, replay: Option<&Replay>) -> Option<RunError> {
    let (LoadedCase::Ready(job), Some(replay)) = (case, replay) else { return None };
    match replay.recording(&job.id) {
        Some(recording) => {
            if let Some(compared) = &job.grouped {
                compared.group.replay_from(|id| replay.recording(id));
            }
            job.recording = Some(recording);
            None
        }
        None => Some(replay.not_recorded(&job.id)),
    }
}

/// Whether `job` runs start to end on one of the run's CPU threads: its
/// agents and checks are all in-process, it is no member of a group, and
/// it waits on no prerequisite.
fn runs_on_cpu_thread(job: &Job) -> bool {
    job.is_in_process() && job.grouped.is_none() && (job.prerequisite.is_none() || job.recording.is_some())
}

/// Runs an in-process case on one of the run's CPU threads, holding
/// `slot`; it reports itself from there.
fn start_on_cpu_thread(
    task: CaseTask,
    seq: u64,
    slot: OwnedSemaphorePermit,
    permit: OwnedSemaphorePermit,
    parked_places: Arc<Semaphore>,
) {
    let runtime = tokio::runtime::Handle::current();
    let results = task.events.clone();
    let identity = Identity::of(&task.job);
    let place = Arc::new(Place { permit: std::sync::Mutex::new(Some(permit)), parked_places });
    let cpu = task.context.cpu.clone();
    cpu.run(move || {
        let held = super::cpu_threads::hold_slot((slot, SwapAtPark(place.clone())));
        let result = decide_here(|| task.run_in_process(&runtime), identity);
        let place = place.take();
        drop(held);
        let unannounced = result.samples.last().map(|sample| sample.index);
        let _ = results.send(Admission::Finished { seq, result, place, unannounced });
    });
}

/// Runs a case as a task on the runtime, and reports it when it ends, is
/// stopped, or panics.
fn start_task(task: CaseTask, seq: u64, permit: OwnedSemaphorePermit, mut stopped: watch::Receiver<Option<Arc<str>>>) {
    let results = task.events.clone();
    let identity = Identity::of(&task.job);
    let mut handle = tokio::spawn(async move { task.run().await });
    tokio::spawn(async move {
        let result = tokio::select! {
            joined = &mut handle => {
                joined.unwrap_or_else(|error| identity.internal_error(panic_message(error)))
            }
            reason = stop_reason(&mut stopped) => {
                // The task reports its own stop, with the samples it
                // finished; one that cannot at once (waiting on a
                // prerequisite, say) is stopped here.
                match tokio::time::timeout(STOP_GRACE, &mut handle).await {
                    Ok(joined) => joined.unwrap_or_else(|error| identity.internal_error(panic_message(error))),
                    Err(_) => {
                        handle.abort();
                        identity.failed(stopped_error(&reason))
                    }
                }
            }
        };
        let _ = results.send(Admission::Finished { seq, result, place: permit, unannounced: None });
    });
}

/// How many bytes of answers a case has kept of its samples so far: past
/// [`MAX_KEPT_ANSWER_BYTES`], a sample's answers are left out. A case's
/// first sample is always kept whole, and measured only when a second
/// comes, so that a case of one sample (most) costs nothing here.
#[derive(Default)]
struct KeptAnswers(usize);

impl KeptAnswers {
    /// Keeps `sample`, which follows `earlier`, whole while the case has
    /// room, else its verdicts.
    fn keep(&mut self, earlier: &[SampleResult], sample: &mut SampleResult) {
        match earlier {
            [] => return,
            [first] => self.0 += first.line_bytes(),
            _ => {}
        }
        if self.0 >= MAX_KEPT_ANSWER_BYTES {
            sample.leave_answers_out();
            return;
        }
        self.0 += sample.line_bytes();
    }
}

/// The error of a case the run stopped while it ran, for `reason`.
fn stopped_error(reason: &str) -> RunError {
    RunError { kind: ErrorKind::Stopped, message: format!("the run was stopped while the case ran: {reason}") }
}

/// How long a stopped case's task has to report itself, with the samples
/// it finished, before it is stopped without them.
const STOP_GRACE: Duration = Duration::from_millis(200);

/// Why the run was stopped, once it is; never, if it ends first.
async fn stop_reason(stopped: &mut watch::Receiver<Option<Arc<str>>>) -> Arc<str> {
    let reason = stopped.wait_for(Option::is_some).await.map(|reason| reason.clone());
    match reason {
        Ok(reason) => reason.expect("waited for a reason"),
        Err(_) => std::future::pending().await,
    }
}

/// The result `decide` gives, on the calling thread; a case whose
/// `decide` panicked is an internal error of the case `identity` names.
fn decide_here(decide: impl FnOnce() -> CaseResult, identity: Identity) -> CaseResult {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(decide))
        .unwrap_or_else(|panic| identity.internal_error(panic_payload_message(panic)))
}

/// What names a case in its result, kept aside in case its task dies.
struct Identity {
    id: String,
    file: std::path::PathBuf,
    agent: String,
    connections: Vec<Connection>,
    success_ratio: crate::case::SuccessRatio,
}

impl Identity {
    fn of(job: &Job) -> Identity {
        Identity {
            id: job.id.clone(),
            file: job.file.clone(),
            agent: job.agent.clone(),
            connections: job.connections.clone(),
            success_ratio: job.success_ratio,
        }
    }

    /// The result of a case whose task panicked.
    fn internal_error(self, cause: String) -> CaseResult {
        self.failed(RunError {
            kind: ErrorKind::Internal,
            message: format!(
                "internal error: the case's task stopped before deciding it ({cause}); this is a bug in assay, please report it"
            ),
        })
    }

    /// The result of a case that ended in `error` before any sample ran.
    fn failed(self, error: RunError) -> CaseResult {
        CaseResult {
            id: self.id,
            file: self.file,
            agent: self.agent,
            connections: self.connections,
            success_ratio: self.success_ratio,
            status: CaseStatus::Error,
            samples: Vec::new(),
            error: Some(error),
            duration_ms: 0.0,
        }
    }
}

fn broken(id: String, error: crate::errors::CaseError) -> CaseResult {
    CaseResult {
        id,
        file: error.file.clone(),
        agent: String::new(),
        connections: Vec::new(),
        success_ratio: Default::default(),
        status: CaseStatus::Error,
        samples: Vec::new(),
        error: Some(RunError { kind: broken_kind(&error.kind), message: error.to_string() }),
        duration_ms: 0.0,
    }
}

/// The error kind of a case that cannot run: its file is bad, or (for a
/// scenario) no agent was named.
fn broken_kind(kind: &CaseErrorKind) -> ErrorKind {
    match kind {
        CaseErrorKind::NoAgent { .. } => ErrorKind::NoAgent,
        _ => ErrorKind::BadFile,
    }
}

/// One case: its samples, started as needed.
struct CaseTask {
    context: Context,
    job: Arc<Job>,
    semaphore: Arc<Semaphore>,
    /// Whether its checks wait on the judge: then each agent call takes a
    /// slot, and the checks that follow hold none.
    waits_on_judge: bool,
    /// Whether its checks may wait on the network (the judge, an
    /// embeddings backend): then they run on blocking threads, not on the
    /// run's CPU threads.
    checks_wait: bool,
    sample_timeout: Option<RunTimeout>,
    default_timeout: Duration,
    exhaustive: bool,
    /// Set, with the reason, when the run is stopped: a case running
    /// in-process stops between its samples.
    stopped: watch::Receiver<Option<Arc<str>>>,
    /// The most of its samples started and not yet decided (the run's
    /// `jobs`): a case asking for a million samples holds no more tasks
    /// than it can run at once.
    max_in_flight: usize,
    /// Where each decided sample is announced.
    events: mpsc::UnboundedSender<Admission>,
}

impl CaseTask {
    /// Keeps as many samples running as may still be needed to reach `k`
    /// passes (at most `jobs` at once), so it never runs a sample whose
    /// result cannot matter: it stops as soon as `k` have passed, or when
    /// `k` can no longer be reached. Exhaustive, it runs all `n`, `jobs` at
    /// a time, and waits for every one.
    async fn run(self) -> CaseResult {
        let started = Instant::now();
        if let (Some(prerequisite), None) = (&self.job.prerequisite, &self.job.recording)
            && let Err(message) = prerequisite.ensure().await
        {
            return Identity::of(&self.job).failed(RunError { kind: ErrorKind::Setup, message });
        }
        let ratio = self.job.success_ratio;
        let exhaustive = self.exhaustive;
        let task = Arc::new(self);
        let mut running = JoinSet::new();
        let mut next = 0;
        let mut passes = 0u32;
        let mut samples: Vec<SampleResult> = Vec::new();
        let mut kept = KeptAnswers::default();
        loop {
            let wanted = if exhaustive { ratio.samples } else { ratio.required.saturating_sub(passes) };
            let in_flight = (wanted as usize).min(task.max_in_flight);
            while running.len() < in_flight && next < ratio.samples {
                running.spawn(task.clone().sample(next));
                next += 1;
            }
            let mut stopped = task.stopped.clone();
            let joined = tokio::select! {
                biased;
                reason = stop_reason(&mut stopped) => {
                    running.abort_all();
                    return task.stopped_result(samples, started, &reason);
                }
                joined = running.join_next() => joined,
            };
            let Some(joined) = joined else { break };
            // A sample that panicked takes its case down with it: the case
            // is then reported as an internal error (see `admit`).
            let mut sample = joined.unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()));
            task.announce(&sample);
            passes += u32::from(sample.passed);
            kept.keep(&samples, &mut sample);
            samples.push(sample);
            if !exhaustive && ratio.is_decided(passes, running.len() as u32 + (ratio.samples - next)) {
                break;
            }
        }
        running.abort_all();
        task.result(samples, started)
    }

    /// A case whose every connection is an in-process agent, on the calling
    /// blocking thread: its samples one after another, agent calls and
    /// checks inline (all of it is CPU work; handing pieces between threads
    /// would cost more than it saves). It stops by the same rule as
    /// [`CaseTask::run`], once `k` have passed or `k` is out of reach, so it
    /// runs the same samples. Its last sample is announced with the case,
    /// not on its own.
    fn run_in_process(self, runtime: &tokio::runtime::Handle) -> CaseResult {
        let started = Instant::now();
        let ratio = self.job.success_ratio;
        let mut samples: Vec<SampleResult> = Vec::new();
        let mut kept = KeptAnswers::default();
        for index in 0..ratio.samples {
            if let Some(reason) = self.stopped.borrow().clone() {
                return self.stopped_result(samples, started, &reason);
            }
            let mut sample = runtime.block_on(self.conversations(index, Work::Inline, None));
            kept.keep(&samples, &mut sample);
            samples.push(sample);
            let passes = samples.iter().filter(|s| s.passed).count() as u32;
            let left = ratio.samples - index - 1;
            if left == 0 || (!self.exhaustive && ratio.is_decided(passes, left)) {
                break;
            }
            self.announce(samples.last().expect("a sample was just run"));
        }
        self.result(samples, started)
    }

    /// Tells the run that `sample` is decided.
    fn announce(&self, sample: &SampleResult) {
        let _ = self.events.send(Admission::Sample {
            case: self.job.id.clone(),
            index: sample.index,
            passed: sample.passed,
            duration: sample_duration(sample),
        });
    }

    /// The result of a case the run stopped: the samples that had finished,
    /// and a `stopped` error naming `reason`.
    fn stopped_result(&self, samples: Vec<SampleResult>, started: Instant, reason: &str) -> CaseResult {
        CaseResult { status: CaseStatus::Error, error: Some(stopped_error(reason)), ..self.result(samples, started) }
    }

    /// The case's result from the samples that ran.
    fn result(&self, mut samples: Vec<SampleResult>, started: Instant) -> CaseResult {
        samples.sort_by_key(|s| s.index);
        let job = &self.job;
        let ratio = job.success_ratio;
        CaseResult {
            id: job.id.clone(),
            file: job.file.clone(),
            agent: job.agent.clone(),
            connections: job.connections.clone(),
            success_ratio: ratio,
            status: CaseResult::status_of(ratio.required, &samples),
            samples,
            error: None,
            duration_ms: millis(started.elapsed()),
        }
    }

    /// One sample: every connection in turn, each from a fresh conversation,
    /// all under the sample's bound (the run's, the case's or the default).
    /// A sample whose checks wait on the judge takes a slot for each agent
    /// call instead, and none while its checks wait.
    async fn sample(self: Arc<Self>, index: u32) -> SampleResult {
        if self.waits_on_judge {
            return self.conversations(index, Work::Offloaded, Some(&self.semaphore)).await;
        }
        let _permit = self.semaphore.clone().acquire_owned().await.expect("the semaphore is never closed");
        let work = if self.checks_wait { Work::Offloaded } else { Work::OnCpuThreads };
        self.conversations(index, work, None).await
    }

    /// The sample's conversations; `slots`, if given, is where each agent
    /// call takes its slot.
    async fn conversations(&self, index: u32, work: Work, slots: Option<&Semaphore>) -> SampleResult {
        if let Some(compared) = &self.job.grouped {
            let bounds =
                super::group::Bounds { run: self.sample_timeout, default: self.default_timeout, at_once: self.max_in_flight };
            return super::group::sample(&self.context, compared, index, bounds).await;
        }
        let started = Instant::now();
        let deadline = Deadline::sample(started, self.sample_timeout, self.job.timeout, self.default_timeout);
        let mut runs = Vec::new();
        for connection in &self.job.connections {
            runs.push(converse(&self.context, &self.job, connection, index, deadline, work, slots).await);
        }
        let passed = runs.iter().all(|r| r.passed);
        SampleResult { index, passed, runs, duration_ms: millis(started.elapsed()), answers_left_out: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_names_cases_never_reported_reported_twice_or_never_admitted() {
        let mut ledger = Ledger::default();
        for id in ["a", "b", "c"] {
            ledger.started(id.to_owned());
        }
        ledger.finished("a");
        ledger.finished("a");
        ledger.finished("c");
        assert_eq!(
            ledger.close(4),
            [
                "case `a` was reported more often than it was admitted",
                "case `b` was admitted but never reported",
                "1 of 4 cases were never admitted to the run",
            ]
        );

        let mut ledger = Ledger::default();
        ledger.started("a".to_owned());
        ledger.finished("a");
        assert!(ledger.close(1).is_empty());
    }

    #[test]
    fn a_case_that_panics_where_it_is_decided_is_an_internal_error_naming_the_panic() {
        let identity = || Identity {
            id: "cases/a".into(),
            file: "cases/a.hocon".into(),
            agent: "echo".into(),
            connections: vec![Connection::Direct],
            success_ratio: Default::default(),
        };
        let result = decide_here(|| panic!("a bug in a case"), identity());
        assert_eq!((result.id.as_str(), result.status), ("cases/a", CaseStatus::Error));
        let error = result.error.expect("an error");
        assert_eq!(error.kind, ErrorKind::Internal);
        assert!(error.message.contains("(it panicked: a bug in a case)"), "{}", error.message);

        let decided = identity().failed(RunError { kind: ErrorKind::CaseTimeout, message: "late".into() });
        let result = decide_here(move || decided, identity());
        assert_eq!(result.error.expect("its own error").message, "late");
    }
}
