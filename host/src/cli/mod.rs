//! The command line: flag definitions (`args.rs`) and one module per
//! command. This is the binary's side of the crate; everything it calls is
//! the `assay` library.

mod agent;
mod args;
mod assess;
mod check;
mod diff;
mod error;
mod eval;
mod init;
mod merge;
mod options;
mod plan;
mod plugin;
mod plugins;
mod project;
mod report;
mod run;
mod serve;
mod validate;

pub use args::Cli;
use args::Command;
pub use error::CliError;

/// Runs a parsed command line and returns the exit code.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Init(args) => init::run(args),
        Command::Run(args) => run::run(args),
        Command::Plugins(args) => plugins::run(args),
        Command::Check(args) => check::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Agent(command) => agent::run(command),
        Command::Plugin(command) => plugin::run(command),
        Command::Assess(args) => assess::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Report(args) => report::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Serve(args) => serve::run(args),
    }
}

/// The exit code for an error that ended a command.
pub fn exit_code_for(error: &anyhow::Error) -> u8 {
    if let Some(error) = error.downcast_ref::<CliError>() {
        return error.exit_code();
    }
    let usage = error.downcast_ref::<clap::Error>().is_some()
        || error.downcast_ref::<assay::errors::ProjectError>().is_some_and(|e| e.is_usage());
    if usage { assay::exit_codes::USAGE } else { assay::exit_codes::FAILED }
}
