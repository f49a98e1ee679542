//! assay: an assertion engine for testing AI agents and LLM applications.
//!
//! The front door is [`Project`]: it reads `assay.toml` and the
//! environment once, as `assay run` does, and hands out the case files of a
//! run and a [`Runner`]. A folder of test cases, run:
//!
//! ```
//! use assay::{Project, ProjectOptions, RunOptions, Terminal, Verbosity};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let project = Project::open(ProjectOptions::default())?; // ./assay.toml, the environment
//! let files = project.discover(&["../fixtures/cases".into()], None)?;
//! let runner = project.runner(RunOptions::default())?;
//! let summary = runner.run_blocking(project.cases(files, None)?, &mut Terminal::stdio(Verbosity::Quiet));
//! assert!(summary.success(false)); // flaky passes, unless it must not
//! # Ok(()) }
//! ```
//!
//! A reporter of your own implements [`Reporter`]: it gets every
//! [`RunEvent`] of the run, a [`CaseResult`] as each case ends
//! (`host/examples/embed.rs` is a small tool that does so). The stock
//! reporters are [`Terminal`], [`ResultsDir`] (`results.jsonl` and
//! `summary.json`) and [`JunitReport`], put together by a [`ReporterSet`].
//! Every error type is in [`errors`]; [`command_line`] is the `assay`
//! command itself.
//!
//! Inside, a test case travels through one private module per stage, each
//! importing only those below it:
//!
//! ```text
//!  case files ──► formats ──► job ──► run ──► report ──► results/
//!  (case: the     (HOCON,     (Job,   (Runner:  (terminal,  (read back:
//!   vocabulary,    suites,     pending samples,  results,    merge, diff,
//!   trust,         promptfoo,  cases,  timeouts, JUnit)      rerun, HTML)
//!   discovery)     scenarios)  groups)  events)
//!                                │
//!            agent ◄─────────────┤  transports to the agent under test
//!            check, plugin ◄─────┘  checks → matcher components → verdicts
//!            sandbox                the WebAssembly sandbox they all run in
//! ```
//!
//! `template` is the one `{{…}}` engine (promptfoo's prompts, suite fields,
//! http request templates); `eval` builds the Assessor, scenario
//! evaluation and judge validation on these stages; `serve` is the project
//! as an HTTP API; `authoring` scaffolds and builds plugins; `backend`
//! holds the remote judge and embeddings a granted plugin may ask;
//! `config` reads `assay.toml`. The command line (`src/cli/`) is a private
//! module of this library that uses only what is re-exported here and the
//! stages above, as an embedder would.
//!
//! The project's own tests, benches and examples reach the stages through
//! the `internals` feature (a dev-dependency of this crate on itself): it
//! makes each module public, hidden from these docs and outside semver.
#![warn(missing_docs)]
// What a stage re-exports for the project's tests is unused in a build
// without them; with them (`cargo clippy --all-targets`) every unused
// import is still an error.
#![cfg_attr(not(feature = "internals"), allow(unused_imports))]

/// Declares the library's stages: private modules, public (and hidden from
/// the docs) only with the `internals` feature, which the project's own
/// tests, benches and examples turn on.
macro_rules! stages {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        mod $name;
    )*};
}

stages!(
    agent,
    authoring,
    backend,
    case,
    check,
    config,
    credentials,
    distribution,
    eval,
    formats,
    job,
    plugin,
    plural,
    project,
    report,
    results,
    run,
    sandbox,
    serve,
    suggest,
    template,
);

mod cache_key;
mod cli;
pub mod errors;
pub mod exit_codes;
mod net;
mod private_files;

pub use check::Verdict;
pub use cli::main as command_line;
pub use job::{CaseResult, CaseStatus, Replay};
pub use project::{Discovered, Project, ProjectOptions, TrustedFiles};
pub use report::{JunitReport, ReporterSet, ResultsDir, Terminal, Verbosity};
pub use run::{EventKind, Reporter, RunEvent, RunOptions, RunSummary, RunTimeout, Runner, Shard};
