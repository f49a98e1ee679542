//! assay's build tool.
//!
//! `cargo xtask build` builds every component crate of the workspace (a
//! package with `[package.metadata.assay] component = "NAME.wasm"`) for
//! `wasm32-unknown-unknown`, turns each core module into a component with
//! `wit-component`, and writes it next to the crate. It also assembles every
//! WAT fixture `fixtures/plugins/wat/*.wat` (hostile plugins that cannot be
//! written in Rust) into a component next to it; those need no Rust
//! toolchain. Last it writes the record `plugins/components.txt` (toolchain
//! and sha256 of every component, WAT fixtures included), and the built-ins
//! compiled to native code for the binary to embed (`NAME.x86_64-linux.cwasm`,
//! by the host's `precompile_builtins` example).
//!
//! `cargo xtask build --check` does the same into a scratch directory and
//! fails if any committed component differs from its source build; for a
//! crate marked `check = "inputs"` (the JavaScript engine, whose release
//! build is slow) it checks instead that the component's recorded inputs
//! (`INPUTS.sha256` beside it) are the current ones.
//!
//! `cargo xtask wit-package` writes the WIT packages of `wit/` as binary
//! WIT packages into `target/wit/`, ready for `wkg publish`.
//!
//! The wasm builds go to `$CARGO_TARGET_DIR/wasm` (default `target/wasm`);
//! a crate with `cfg`s of its own builds in `wasm-PACKAGE` beside it.

mod components;
mod inputs;
mod toolchain;
mod wat;
mod wit_package;

use anyhow::{Result, bail};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask build [--check] [--toolchain auto|rustup|debian]
       cargo xtask wit-package

  build        build every component from source (crates and fixtures/plugins/wat/*.wat)
               and write it next to its source
  --check      rebuild into a scratch directory and fail if a committed component differs
  --toolchain  which Rust toolchain builds the wasm: `rustup` (needs `rustup target add
               wasm32-unknown-unknown`), `debian` (Debian's rustc-web with -Zbuild-std), or
               `auto` (the one the committed components were built with, when present)
  wit-package  write each WIT package of wit/ as a binary WIT package (what `wkg wit build`
               makes) to target/wit/, for `wkg publish`";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut check = false;
    let mut choice = toolchain::Choice::Auto;
    let mut iter = args.iter();
    match iter.next().map(String::as_str) {
        Some("build") => {}
        Some("wit-package") => {
            let out = workspace_root().join("target/wit");
            for path in wit_package::write_all(&workspace_root(), &out)? {
                println!("{}", path.display());
            }
            return Ok(());
        }
        Some("-h" | "--help") | None => {
            println!("{USAGE}");
            return Ok(());
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--toolchain" => {
                let value = iter.next().map(String::as_str).unwrap_or("");
                choice = toolchain::Choice::parse(value)?;
            }
            other => bail!("unknown option `{other}`\n\n{USAGE}"),
        }
    }
    let root = workspace_root();
    components::build_all(&root, choice, check)?;
    if !check {
        precompile_builtins(&root)?;
    }
    Ok(())
}

/// Writes the built-ins' native artifacts, which the assay binary embeds
/// (`host/src/sandbox/precompiled.rs`), from the components just written:
/// compiled by the host's own wasmtime, so through one of its examples. A
/// check leaves them to the host's test that compiles each again
/// (`host/tests/integration/plugins/precompiled.rs`).
fn precompile_builtins(root: &std::path::Path) -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(root)
        .args(["run", "--quiet", "-p", "assay", "--example", "precompile_builtins"])
        .status()?;
    if !status.success() {
        bail!("precompiling the built-in components failed (see above)");
    }
    Ok(())
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives inside the workspace").to_path_buf()
}
