//! Finding a toolchain that can build `wasm32-unknown-unknown`: rustup's
//! when it has the target, else Debian's `rustc-web` building std from
//! source (`-Zbuild-std`).

use crate::errors::AuthoringError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian's rustc-web puts its compiler.
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
/// Where Debian's rust-web-src puts std's source.
const DEBIAN_STD_SRC: &str = "/usr/lib/rustlib/src/rust/library";

/// `cargo`, set up to build for `wasm32-unknown-unknown` with the toolchain
/// found: arguments after these are the subcommand's.
pub(super) fn wasm_cargo() -> Result<Command, AuthoringError> {
    let sysroot = Command::new("rustc").args(["--print", "sysroot"]).output().ok();
    let rustup_target = sysroot
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .is_some_and(|root| root.join("lib/rustlib/wasm32-unknown-unknown/lib").is_dir());
    if rustup_target {
        return Ok(Command::new("cargo"));
    }
    if Path::new(DEBIAN_RUSTC).exists() && Path::new(DEBIAN_STD_SRC).exists() {
        let mut cargo = Command::new("/usr/bin/cargo");
        let path = std::env::var("PATH").unwrap_or_default();
        cargo
            .env("PATH", format!("/usr/bin:{path}"))
            .env("RUSTC_BOOTSTRAP", "1")
            .env("RUSTC", DEBIAN_RUSTC)
            // A global flag: it may come before the subcommand.
            .arg("-Zbuild-std=std,panic_abort");
        return Ok(cargo);
    }
    Err(AuthoringError::NoWasmToolchain)
}
