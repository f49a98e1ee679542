//! The `assay` command: parse the command line, run the command, map the
//! result to an exit code (see `assay::exit_codes`).

mod cli;

use std::process::ExitCode;

/// mimalloc rather than glibc's malloc: a run hands most of what it
/// allocates from thread to thread (a case is read on a reader thread, run
/// on a case thread, reported on the main thread), which glibc's arenas
/// serve slowly. The 10,000-case run takes ~17% less time for ~1–3 MB more
/// peak memory (README, "Performance").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = <cli::Cli as clap::Parser>::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            if is_broken_pipe(&error) {
                return ExitCode::from(assay::exit_codes::OK);
            }
            eprintln!("error: {error:#}");
            ExitCode::from(cli::exit_code_for(&error))
        }
    }
}

/// A closed stdout (`assay plan | head`) is not an error.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}
