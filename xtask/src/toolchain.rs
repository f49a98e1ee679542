//! Finds a Rust toolchain that can build `wasm32-unknown-unknown`: rustup's
//! (when the target is installed) or Debian's `rustc-web` (which ships the
//! wasm codegen; std is built from `rust-web-src` with `-Zbuild-std`).

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// Which toolchain the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The recorded one when present, else whichever is available.
    Auto,
    /// rustup's toolchain with the wasm target installed.
    Rustup,
    /// Debian's rustc-web with -Zbuild-std.
    Debian,
}

impl Choice {
    pub fn parse(value: &str) -> Result<Self> {
        Ok(match value {
            "auto" => Choice::Auto,
            "rustup" => Choice::Rustup,
            "debian" => Choice::Debian,
            other => bail!("unknown toolchain `{other}`: use auto, rustup or debian"),
        })
    }
}

/// A toolchain ready to build wasm.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// `rustup` or `debian`.
    pub route: &'static str,
    /// `rustc --version` of the compiler that builds the wasm.
    pub version: String,
}

/// Where Debian's rustc-web puts its compiler.
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
/// Where Debian's rust-web-src puts the standard library source.
const DEBIAN_STD_SRC: &str = "/usr/lib/rustlib/src/rust/library";

const INSTALL_HINT: &str = "\
no Rust toolchain here can build wasm32-unknown-unknown.

Consider one of:
  rustup target add wasm32-unknown-unknown
or, on Debian/Ubuntu without rustup's wasm target:
  apt-get update && apt-get install -y rustc-web cargo-web rust-web-src lld-22";

impl Toolchain {
    /// Picks a toolchain: the one asked for, or (for `Auto`) the recorded
    /// route when it is available, else any available one.
    pub fn find(choice: Choice, recorded_route: Option<&str>) -> Result<Toolchain> {
        let rustup = rustup_has_wasm_target();
        let debian = Path::new(DEBIAN_RUSTC).exists() && Path::new(DEBIAN_STD_SRC).exists();
        let route = match choice {
            Choice::Rustup if rustup => "rustup",
            Choice::Rustup => bail!(
                "rustup's wasm32-unknown-unknown target is not installed.\n\nConsider: rustup target add wasm32-unknown-unknown"
            ),
            Choice::Debian if debian => "debian",
            Choice::Debian => bail!(
                "Debian's rustc-web toolchain is not installed.\n\nConsider: apt-get update && apt-get install -y rustc-web cargo-web rust-web-src lld-22"
            ),
            Choice::Auto => match (recorded_route, rustup, debian) {
                (Some("debian"), _, true) => "debian",
                (Some("rustup"), true, _) => "rustup",
                (_, true, _) => "rustup",
                (_, _, true) => "debian",
                _ => bail!("{INSTALL_HINT}"),
            },
        };
        let rustc = if route == "debian" { DEBIAN_RUSTC } else { "rustc" };
        let output = Command::new(rustc)
            .arg("--version")
            .output()
            .with_context(|| format!("failed to run `{rustc} --version`"))?;
        let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        Ok(Toolchain { route, version })
    }

    /// A `cargo build` command for the wasm target with this toolchain,
    /// with paths remapped so that the output does not depend on where the
    /// checkout or the cargo home lives, and with `cfgs` set (`--cfg`).
    pub fn cargo_build(&self, root: &Path, target_dir: &Path, packages: &[String], cfgs: &[String]) -> Command {
        let cargo_home = std::env::var("CARGO_HOME")
            .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
        let mut rustflags = format!(
            "-C target-feature=+simd128 --remap-path-prefix={}=/assay --remap-path-prefix={cargo_home}=/cargo",
            root.display()
        );
        for cfg in cfgs {
            rustflags.push_str(&format!(" --cfg {cfg}"));
        }
        let mut command = if self.route == "debian" {
            let mut command = Command::new("/usr/bin/cargo");
            let path = std::env::var("PATH").unwrap_or_default();
            command.env("PATH", format!("/usr/bin:{path}")).env("RUSTC_BOOTSTRAP", "1").env("RUSTC", DEBIAN_RUSTC);
            command
        } else {
            Command::new("cargo")
        };
        command
            .current_dir(root)
            .env("RUSTFLAGS", rustflags)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("RUSTC_WRAPPER")
            .args(["build", "--locked", "--profile", "plugin", "--target", "wasm32-unknown-unknown"])
            .arg("--target-dir")
            .arg(target_dir);
        if self.route == "debian" {
            command.arg("-Zbuild-std=std,panic_abort");
        }
        for package in packages {
            command.args(["--package", package]);
        }
        command
    }
}

/// Whether rustup's active toolchain has the wasm32-unknown-unknown target.
fn rustup_has_wasm_target() -> bool {
    let Ok(output) = Command::new("rustc").args(["--print", "sysroot"]).output() else {
        return false;
    };
    let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    !sysroot.is_empty() && Path::new(&sysroot).join("lib/rustlib/wasm32-unknown-unknown/lib").is_dir()
}
