//! Writes the built-in components' native artifacts, which the binary
//! embeds so that a first run compiles nothing (`host/src/sandbox/precompiled.rs`).
//! `cargo xtask build` runs it after building the components:
//!
//! ```sh
//! cargo run -p assay --example precompile_builtins
//! ```
//!
//! writes `NAME.x86_64-linux.cwasm` beside each listed `NAME.wasm` of this
//! checkout and prints what it wrote. The bytes depend only on the
//! component and this crate's wasmtime and engine configuration, not on
//! the machine, so the test that compares them passes everywhere.

use assay::sandbox::precompiled::{ARTIFACT_SUFFIX, PRECOMPILED, precompile};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("host/ lives in the workspace");
    for path in PRECOMPILED {
        let component = root.join(format!("{path}.wasm"));
        let artifact = root.join(format!("{path}{ARTIFACT_SUFFIX}"));
        let written = std::fs::read(&component)
            .map_err(|e| e.to_string())
            .and_then(|bytes| precompile(&bytes).map_err(|e| format!("{e:#}")))
            .and_then(|file| std::fs::write(&artifact, &file).map(|()| file.len()).map_err(|e| e.to_string()));
        match written {
            Ok(bytes) => println!("wrote {path}{ARTIFACT_SUFFIX} ({bytes} bytes)"),
            Err(error) => {
                eprintln!("error: cannot precompile {}: {error}", component.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
