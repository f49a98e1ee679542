//! The command line: flag definitions (`args.rs`) and one module per
//! command, each calling the library's stages as an embedder would. The
//! `assay` binary is [`main`] under its allocator.

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

use args::{Cli, Command};
use error::CliError;
use std::process::ExitCode;

/// `assay`'s command line: parses the process's arguments, runs the
/// command and says its exit code (see [`crate::exit_codes`]); the error
/// that ended a command is printed to stderr.
pub fn main() -> ExitCode {
    let args = <Cli as clap::Parser>::parse();
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            if is_broken_pipe(&error) {
                return ExitCode::from(crate::exit_codes::OK);
            }
            eprintln!("error: {error:#}");
            ExitCode::from(exit_code_for(&error))
        }
    }
}

/// A closed stdout (`assay plan | head`) is not an error.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Runs a parsed command line and returns the exit code.
fn run(cli: Cli) -> anyhow::Result<u8> {
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
fn exit_code_for(error: &anyhow::Error) -> u8 {
    if let Some(error) = error.downcast_ref::<CliError>() {
        return error.exit_code();
    }
    let usage = error.downcast_ref::<clap::Error>().is_some()
        || error.downcast_ref::<crate::errors::ProjectError>().is_some_and(|e| e.is_usage());
    if usage { crate::exit_codes::USAGE } else { crate::exit_codes::FAILED }
}
