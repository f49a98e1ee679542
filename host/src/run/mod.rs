//! The runner: every test case × sample × connection as tasks on tokio,
//! under one concurrency limit, with `success_ratio` early stopping and
//! deadlines that cancel requests; a case that is CPU work only (its agents
//! and checks all in-process) runs start to end on one of the run's CPU
//! threads instead (`cpu_threads`). Cases come from a [`CaseSource`] (read
//! in parallel as the run goes); results flow to reporters as a stream of
//! [`RunEvent`]s (a case started, each sample finished, a case slow, a case
//! finished as soon as it is decided), and are not kept, so memory stays
//! flat however many cases run. A reporter's error cancels the run: no
//! further case is started, and the cases in flight finish and are
//! reported.
//!
//! ```
//! use assay::agent::{AgentCatalog, Agents, HttpAgents, HttpSettings};
//! use assay::case::CaseEnv;
//! use assay::formats::discover;
//! use assay::plugin::Registry;
//! use assay::sandbox::{Limits, Runtime};
//! use assay::run::{EventKind, RunEvent, RunOptions, Reporter, Runner};
//! use assay::job::{CaseSource, load_cases};
//! use std::sync::Arc;
//!
//! /// Prints each case's status.
//! struct Print;
//! impl Reporter for Print {
//!     fn report(&mut self, event: &RunEvent<'_>) -> std::io::Result<()> {
//!         if let EventKind::CaseFinished(case) = event.kind {
//!             println!("{} {}", case.id, case.status.name());
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let runtime = Runtime::new(Limits::default().memory_bytes);
//! let registry = Arc::new(Registry::with_builtins(&runtime).unwrap());
//! let catalog = AgentCatalog::with_demo_agents(runtime, Limits::default());
//! let agents = Agents::new(catalog, HttpAgents::new(HttpSettings::default()).unwrap());
//! let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");
//! let files = discover(&[fixtures.into()]).unwrap();
//! let env = CaseEnv::from_process(["OPENAI_API_KEY"], ["ASSAY_JUDGE_API_KEY"]);
//! let cases = CaseSource::loaded(load_cases(&files, registry.as_ref(), &env, None));
//! let runner = Runner::new(registry, agents, RunOptions::default());
//! let summary = runner.run_blocking(cases, &mut Print);
//! assert!(summary.success(false));
//! ```

mod batched_permits;
mod conversation;
mod cpu_threads;
mod event;
mod group;
mod panic_message;
mod runner;
mod shard;
mod slow;
mod timeout;

pub use event::{EventKind, Reporter, RunEvent, RunSummary};
pub use shard::{Shard, stable_hash};
pub use timeout::{DEFAULT_CASE_TIMEOUT, RunTimeout};
pub use runner::{DEFAULT_MAX_CHECKS, DEFAULT_MAX_SAMPLES, DEFAULT_SLOW_TIMEOUT, RunOptions, Runner};
