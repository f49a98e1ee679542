//! Builds the workspace's component crates and WAT fixtures, writes or
//! checks the committed components, and keeps the record
//! `plugins/components.txt`.

use crate::toolchain::{Choice, Toolchain};
use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The record of what built the committed components.
const RECORD: &str = "plugins/components.txt";

/// A workspace package that builds into a component.
struct ComponentCrate {
    /// The cargo package name.
    package: String,
    /// Where the committed component lives.
    output: PathBuf,
    /// `cfg`s its build needs (`[package.metadata.assay] cfg`), e.g.
    /// `getrandom_backend="custom"`: such a crate builds apart from the
    /// others (in its own target directory), so that their flags, and so
    /// their bytes, do not change.
    cfgs: Vec<String>,
    /// Whether `--check` verifies the digests of its inputs instead of
    /// rebuilding it (`[package.metadata.assay] check = "inputs"`; see
    /// `inputs.rs`).
    check_inputs: bool,
}

pub fn build_all(root: &Path, choice: Choice, check: bool) -> Result<()> {
    let crates = component_crates(root)?;
    let record_path = root.join(RECORD);
    let recorded = std::fs::read_to_string(&record_path).ok();
    let recorded_toolchain = recorded.as_deref().and_then(|r| field(r, "toolchain"));
    let recorded_route = recorded.as_deref().and_then(|r| field(r, "route"));
    let toolchain = Toolchain::find(choice, recorded_route.as_deref())?;
    eprintln!("building {} component crates with {} ({})", crates.len(), toolchain.version, toolchain.route);

    // A check verifies the inputs of the slow crates rather than rebuild
    // them; the committed component stands in the record.
    let (by_inputs, to_build): (Vec<&ComponentCrate>, Vec<&ComponentCrate>) =
        crates.iter().partition(|c| check && c.check_inputs);
    let mut built = Vec::new();
    let mut stale_inputs = Vec::new();
    for krate in &by_inputs {
        let dir = krate.output.parent().context("a component lives in a folder")?;
        let differing = crate::inputs::check(root, &krate.package, dir, &krate.output)?;
        let relative = krate.output.strip_prefix(root).unwrap_or(&krate.output).display().to_string();
        if differing.is_empty() {
            eprintln!("{relative}: its inputs are the ones {} records (not rebuilt)", crate::inputs::RECORD);
        } else {
            stale_inputs.push(format!("{relative}: {}", differing.join(", ")));
        }
        let component = std::fs::read(&krate.output)?;
        built.push(Built { output: krate.output.clone(), component, source: Source::Rust });
    }

    // The crates to build, in groups of the same `cfg`s: one cargo run each.
    let mut groups: Vec<(Vec<String>, Vec<&ComponentCrate>)> = Vec::new();
    for krate in to_build {
        match groups.iter_mut().find(|(cfgs, _)| *cfgs == krate.cfgs) {
            Some((_, members)) => members.push(krate),
            None => groups.push((krate.cfgs.clone(), vec![krate])),
        }
    }
    let base_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    for (cfgs, members) in &groups {
        let target_dir = match members.first() {
            Some(first) if !cfgs.is_empty() => base_dir.join(format!("wasm-{}", first.package)),
            _ => base_dir.join("wasm"),
        };
        let packages: Vec<String> = members.iter().map(|c| c.package.clone()).collect();
        let status = toolchain
            .cargo_build(root, &target_dir, &packages, cfgs)
            .status()
            .context("failed to run cargo for the wasm build")?;
        if !status.success() {
            bail!("the wasm build failed (see cargo's output above)");
        }
        // Every component with where it goes.
        for krate in members {
            let module_path = target_dir
                .join("wasm32-unknown-unknown/plugin")
                .join(format!("{}.wasm", krate.package.replace('-', "_")));
            let module =
                std::fs::read(&module_path).with_context(|| format!("failed to read {}", module_path.display()))?;
            let component =
                componentize(&module).with_context(|| format!("failed to make a component of {}", krate.package))?;
            if !check && krate.check_inputs {
                let dir = krate.output.parent().context("a component lives in a folder")?;
                let record = crate::inputs::record(root, &krate.package, dir, &component, &toolchain.version)?;
                std::fs::write(dir.join(crate::inputs::RECORD), record)?;
            }
            built.push(Built { output: krate.output.clone(), component, source: Source::Rust });
        }
    }
    // The WAT fixtures need no toolchain.
    let wat = crate::wat::build_all(root)?;
    eprintln!("assembled {} WAT fixtures", wat.len());
    built.extend(wat.into_iter().map(|w| Built { output: w.output, component: w.bytes, source: Source::Wat }));
    built.sort_by(|a, b| a.output.cmp(&b.output));

    let mut record = format!(
        "# Written by `cargo xtask build`; `cargo xtask build --check` rebuilds and compares.\n\
         toolchain: {}\nroute: {}\n\n",
        toolchain.version, toolchain.route
    );
    let mut differing = Vec::new();
    for component in &built {
        let relative = component.output.strip_prefix(root).unwrap_or(&component.output).display().to_string();
        writeln!(record, "{}  {relative}", sha256_hex(&component.component))?;
        if check {
            let committed = std::fs::read(&component.output).unwrap_or_default();
            if committed != component.component {
                differing.push((relative, component.source));
            }
        } else {
            std::fs::write(&component.output, &component.component)
                .with_context(|| format!("failed to write {}", component.output.display()))?;
            eprintln!("wrote {relative} ({} bytes)", component.component.len());
        }
    }

    if !check {
        std::fs::write(&record_path, record).with_context(|| format!("failed to write {}", record_path.display()))?;
        return Ok(());
    }
    if !stale_inputs.is_empty() {
        bail!(
            "these committed components were not built from their current inputs:\n  {}\n\n\
             Rebuild them with `cargo xtask build` and commit the result.",
            stale_inputs.join("\n  ")
        );
    }
    if differing.is_empty() {
        eprintln!("all {} committed components match their source", built.len());
        return Ok(());
    }
    let names: Vec<&str> = differing.iter().map(|(relative, _)| relative.as_str()).collect();
    let mut message =
        format!("these committed components differ from a build of their source:\n  {}\n", names.join("\n  "));
    let from_rust = differing.iter().any(|(_, source)| *source == Source::Rust);
    match recorded_toolchain {
        Some(recorded) if from_rust && recorded != toolchain.version => write!(
            message,
            "\nThey were built with `{recorded}`, but this machine built with `{}`: a different compiler \
             produces different bytes. Rebuild them here with `cargo xtask build` and commit the result.",
            toolchain.version
        )?,
        _ => message.push_str(
            "\nThe source changed since they were built. Rebuild them with `cargo xtask build` and commit the result.",
        ),
    }
    bail!(message)
}

/// What a component is built from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// A component crate, compiled by the Rust toolchain.
    Rust,
    /// A WAT fixture, assembled: the same bytes on every machine.
    Wat,
}

/// A component built for the record.
struct Built {
    /// Where the committed component lives.
    output: PathBuf,
    /// The component.
    component: Vec<u8>,
    /// What it was built from.
    source: Source,
}

/// Turns a core module built by wit-bindgen (with its component-type custom
/// section) into a component.
fn componentize(module: &[u8]) -> Result<Vec<u8>> {
    wit_component::ComponentEncoder::default().module(module)?.validate(true).encode()
}

/// Reads `name: value` from the record.
fn field(record: &str, name: &str) -> Option<String> {
    record.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(": ").map(str::to_owned))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Every workspace package with `[package.metadata.assay] component`.
fn component_crates(root: &Path) -> Result<Vec<ComponentCrate>> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .context("failed to run cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let mut crates = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let Some(component) = package["metadata"]["assay"]["component"].as_str() else { continue };
        let manifest = PathBuf::from(package["manifest_path"].as_str().unwrap_or_default());
        let dir = manifest.parent().context("manifest path has no parent")?;
        let assay = &package["metadata"]["assay"];
        let cfgs = assay["cfg"].as_array().into_iter().flatten().filter_map(|c| c.as_str().map(str::to_owned));
        let check_inputs = match assay["check"].as_str() {
            None | Some("rebuild") => false,
            Some("inputs") => true,
            Some(other) => bail!("{}: `check = {other:?}` is not `rebuild` or `inputs`", manifest.display()),
        };
        crates.push(ComponentCrate {
            package: package["name"].as_str().unwrap_or_default().to_owned(),
            output: dir.join(component),
            cfgs: cfgs.collect(),
            check_inputs,
        });
    }
    crates.sort_by(|a, b| a.output.cmp(&b.output));
    Ok(crates)
}
