//! assay: an assertion engine for testing AI agents and LLM applications.
//!
//! The front door is [`Project`]: it reads `assay.toml` and the
//! environment once, as `assay run` does, and hands out the case files of a
//! run and a runner. A folder of test cases, run:
//!
//! ```
//! use assay::{Project, ProjectOptions, report::{Terminal, Verbosity}, run::RunOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let project = Project::open(ProjectOptions::default())?; // ./assay.toml, the environment
//! let files = project.discover(&["../fixtures/cases".into()], None)?;
//! let runner = project.runner(RunOptions::default())?;
//! let summary = runner.run_blocking(project.cases(files, None)?, &mut Terminal::stdio(Verbosity::Quiet));
//! assert!(summary.success(false)); // flaky passes, unless it must not
//! # Ok(()) }
//! ```
//!
//! A reporter of your own implements [`run::Reporter`]: it gets every event
//! of the run (`host/examples/embed.rs` is a small tool that does so).
//!
//! A test case travels through one module per stage:
//!
//! - [`case`]: the shared vocabulary of test cases: the typed
//!   [`case::TestCase`], what case files may read from the environment,
//!   which files are trusted ([`case::Trust`]), and finding files;
//! - [`formats`]: one module per input format (neuro-san HOCON, suites,
//!   promptfoo configs, scenarios) behind one table: which files each
//!   claims and how they become pending cases;
//! - [`check`]: each response block → a flat list of [`check::Check`]s, and
//!   their dispatch to matcher plugins → [`check::Verdict`]s;
//! - [`sandbox`]: the WebAssembly sandbox every component runs in, matcher
//!   or agent: the [`sandbox::Runtime`], limits, capability policy, compile
//!   cache, and the host of one component with its pool of instances;
//! - [`plugin`]: the matchers hosted there, and the [`plugin::Registry`] of
//!   assertion keys;
//! - [`agent`]: the connections to the agent under test (in-process
//!   components hosted by the sandbox, neuro-san over HTTP) and response
//!   reduction;
//! - [`job`]: what the runner runs and gives back: [`job::Job`]s, the
//!   pending cases that become them, prerequisites, recordings, and the
//!   [`job::CaseResult`] of each case;
//! - [`run`]: the [`run::Runner`], the scheduler: samples, success ratios,
//!   timeouts, conversation state, and the event stream to reporters;
//! - [`report`]: the terminal, `results.jsonl`, JUnit; a results directory
//!   read back, and two runs compared (`assay diff`).
//!
//! [`template`] is the one `{{…}}` engine, for promptfoo's prompts, suite
//! fields and the request templates of http connections.
//!
//! [`eval`] builds the evaluation workflows on these stages: the Assessor
//! (failure modes of a case's samples), scenario evaluation (weighted
//! scores) and judge validation (agreement with wanted results).
//!
//! [`serve`] is the project as an HTTP API (`assay serve`): checks, runs
//! with their event streams, and promptfoo's webhook.
//!
//! [`authoring`] scaffolds a matcher plugin crate and builds it into a
//! component.
//!
//! [`backend`] holds the remote judge a granted plugin may ask; [`config`]
//! reads `assay.toml`; [`errors`] holds every error type. The compile
//! cache and the answer cache authenticate their files with a per-user key
//! (`cache_key`), and everything assay keeps for the user is written
//! private (`private_files`). The `assay` binary (`src/cli/`) parses flags
//! into [`ProjectOptions`] and prints; everything else is this library.
#![warn(missing_docs)]

pub mod agent;
pub mod authoring;
pub mod backend;
mod cache_key;
pub mod case;
pub mod check;
pub mod config;
pub mod credentials;
pub mod distribution;
pub mod errors;
pub mod eval;
pub mod exit_codes;
pub mod formats;
pub mod job;
mod net;
pub mod plugin;
pub mod plural;
mod private_files;
pub mod project;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod serve;
pub mod suggest;
pub mod template;

pub use project::{Project, ProjectOptions, TrustedFiles};
