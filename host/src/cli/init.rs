//! `assay init [DIR]`: a new project ([`crate::authoring::init_project`]),
//! and what to do next.

use super::CliError;
use super::args::InitArgs;
use anyhow::Result;
use std::path::PathBuf;

pub fn run(args: InitArgs) -> Result<u8> {
    let dir = args.dir.unwrap_or_else(|| PathBuf::from("."));
    let written = crate::authoring::init_project(&dir).map_err(CliError::from)?;
    for path in &written {
        println!("Created {}", path.strip_prefix(".").unwrap_or(path).display());
    }
    println!("Next:");
    if dir != std::path::Path::new(".") {
        println!("  cd {}", dir.display());
    }
    println!("  assay run             # runs cases/ against the demo agent `echo`");
    println!(
        "  then point cases/hello.hocon's `agent` at yours (see \"Test cases\" in the book, docs/book/src/cases.md)"
    );
    Ok(crate::exit_codes::OK)
}
