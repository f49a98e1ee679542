//! Every command and flag of `assay`, as clap derives: plain, validated
//! data and nothing else.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// An assertion engine for testing AI agents, with matchers that run as
/// sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "assay", version, about, max_term_width = 100)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the loaded matcher plugins: their keys, version, source and sha256.
    Plugins(PluginsArgs),
    /// Evaluate one check from the shell.
    Check(CheckArgs),
}

/// `assay plugins`.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    /// Also load this plugin component (no grants).
    #[arg(long = "plugin", value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
}

/// `assay check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The assertion key, e.g. `keywords` or `not_value`.
    #[arg(long)]
    pub key: String,
    /// The actual value as JSON, e.g. '"the Beatles"' or '19481.0'.
    #[arg(long)]
    pub actual: String,
    /// The expected value as JSON, e.g. '"Beatles"'.
    #[arg(long)]
    pub expected: String,
    /// Also load this plugin component (no grants).
    #[arg(long = "plugin", value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
    /// Print the verdict as one JSON object.
    #[arg(long)]
    pub json: bool,
}
