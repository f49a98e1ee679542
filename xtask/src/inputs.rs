//! The record of what a slow component was built from (`INPUTS.sha256`
//! beside it), for crates whose `[package.metadata.assay]` says
//! `check = "inputs"`: `cargo xtask build` writes it, `cargo xtask build
//! --check` recomputes it instead of rebuilding the component (which would
//! cost CI minutes: the JavaScript engine's release build alone takes
//! longer than every other component's together) and fails naming what
//! changed since the build.
//!
//! The inputs are every file of the crate (but the component and this
//! record), the SDK's sources, the WIT packages, the crate's resolved
//! dependencies (`cargo tree`: names, versions, features), the
//! `[profile.*]` sections of the workspace's `Cargo.toml` and the build
//! flags (`xtask/src/toolchain.rs`). The record also names the compiler
//! that built it, and ends with the component's own digest.

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The record's file name, beside the crate's `Cargo.toml`.
pub const RECORD: &str = "INPUTS.sha256";

/// The record's lines for the crate `package` in `crate_dir`, whose
/// component is `component` (its digest is the last line).
pub fn record(root: &Path, package: &str, crate_dir: &Path, component: &[u8], toolchain: &str) -> Result<String> {
    let mut record = format!(
        "# Written by `cargo xtask build`: what the component beside it was built from.\n\
         # `cargo xtask build --check` recomputes these digests instead of rebuilding it.\n\
         toolchain: {toolchain}\n"
    );
    for (digest, name) in digests(root, package, crate_dir)? {
        writeln!(record, "{digest}  {name}")?;
    }
    writeln!(record, "{}  (component)", hex(&Sha256::digest(component)))?;
    Ok(record)
}

/// Checks the record of `package` against its inputs and the committed
/// `component`: the names of what differs, empty when all match.
pub fn check(root: &Path, package: &str, crate_dir: &Path, component: &Path) -> Result<Vec<String>> {
    let record_path = crate_dir.join(RECORD);
    let Ok(recorded) = std::fs::read_to_string(&record_path) else {
        bail!("{} is missing: build the component with `cargo xtask build` to write it", record_path.display());
    };
    let committed = std::fs::read(component).with_context(|| format!("failed to read {}", component.display()))?;
    let mut wanted = digests(root, package, crate_dir)?;
    wanted.push((hex(&Sha256::digest(&committed)), "(component)".to_owned()));
    let recorded: Vec<(String, String)> = recorded
        .lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with("toolchain: ") && !line.is_empty())
        .filter_map(|line| line.split_once("  ").map(|(d, n)| (d.to_owned(), n.to_owned())))
        .collect();
    let mut differing = Vec::new();
    for (digest, name) in &wanted {
        match recorded.iter().find(|(_, n)| n == name) {
            Some((d, _)) if d == digest => {}
            Some(_) => differing.push(format!("{name} changed")),
            None => differing.push(format!("{name} is new")),
        }
    }
    for (_, name) in &recorded {
        if !wanted.iter().any(|(_, n)| n == name) {
            differing.push(format!("{name} is gone"));
        }
    }
    Ok(differing)
}

/// The digest of every input, with its name, in a fixed order.
fn digests(root: &Path, package: &str, crate_dir: &Path) -> Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    let mut skip = vec![crate_dir.join(RECORD)];
    skip.extend(files_under(crate_dir)?.into_iter().filter(|p| p.extension().is_some_and(|x| x == "wasm")));
    files.extend(files_under(crate_dir)?.into_iter().filter(|p| !skip.contains(p)));
    for dir in ["plugin-sdk/src", "wit"] {
        files.extend(files_under(&root.join(dir))?);
    }
    files.extend(["plugin-sdk/Cargo.toml", "xtask/src/toolchain.rs"].map(|f| root.join(f)));
    let mut digests = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).with_context(|| format!("failed to read {}", file.display()))?;
        let name = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        digests.push((hex(&Sha256::digest(&bytes)), name));
    }
    digests.sort_by(|a, b| a.1.cmp(&b.1));
    digests.push((hex(&Sha256::digest(dependency_tree(root, package)?.as_bytes())), "(dependencies)".to_owned()));
    digests.push((hex(&Sha256::digest(profiles(root)?.as_bytes())), "(profiles)".to_owned()));
    Ok(digests)
}

/// Every file under `dir`, sorted, skipping `target` folders.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("failed to read {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    pending.push(path);
                }
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The crate's resolved dependencies for the wasm target, one per line:
/// name, version, source, features.
fn dependency_tree(root: &Path, package: &str) -> Result<String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["tree", "--locked", "--package", package, "--target", "wasm32-unknown-unknown"])
        .args(["--edges", "normal,build", "--prefix", "none", "--format", "{p} {f}", "--no-dedupe"])
        .output()
        .context("failed to run cargo tree")?;
    if !output.status.success() {
        bail!("cargo tree failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let text = String::from_utf8(output.stdout)?;
    // Paths of the workspace's own crates depend on where it is checked out.
    let root_text = root.display().to_string();
    let mut lines: Vec<String> = text.lines().map(|l| l.replace(&root_text, "")).collect();
    lines.sort();
    lines.dedup();
    Ok(lines.join("\n"))
}

/// The `[profile.*]` sections of the workspace's `Cargo.toml`.
fn profiles(root: &Path) -> Result<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).context("failed to read Cargo.toml")?;
    let mut out = String::new();
    let mut inside = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
