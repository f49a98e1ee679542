//! `assay plugin new NAME`: a plugin crate scaffolded around a working
//! matcher and its native unit test. `assay plugin build [DIR]`: that crate
//! built into a component with whichever toolchain can build
//! `wasm32-unknown-unknown` here (rustup's target, else Debian's
//! `rustc-web` with `-Zbuild-std`), checked by loading it, and its path and
//! sha256 printed.

use super::CliError;
use super::args::{PluginBuildArgs, PluginCommand, PluginNewArgs};
use anyhow::{Context, Result, bail};
use assay::plugin::MatcherPlugin;
use assay::sandbox::{ComponentOptions, ComponentSource, Runtime, read_component_file, sha256_hex};
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn run(command: PluginCommand) -> Result<u8> {
    match command {
        PluginCommand::New(args) => new(args),
        PluginCommand::Build(args) => build(args),
    }
}

fn new(args: PluginNewArgs) -> Result<u8> {
    let name = args.name.trim();
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !valid || name.starts_with("not_") || name.starts_with("not-") {
        return Err(CliError::PluginName(name.to_owned()).into());
    }
    let dir = args.dir.unwrap_or_else(|| PathBuf::from(name));
    if dir.exists() && std::fs::read_dir(&dir).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(CliError::NotEmpty(dir).into());
    }
    let key = name.replace('-', "_");
    let sdk = match &args.sdk {
        Some(path) => format!("{{ path = {:?} }}", std::path::absolute(path)?.display().to_string()),
        None => format!("{:?}", sdk_version()),
    };
    let files = [
        ("Cargo.toml", cargo_toml(name, &sdk)),
        ("src/lib.rs", lib_rs(name, &key)),
        (".gitignore", "/target\n".to_owned()),
    ];
    for (relative, text) in &files {
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().expect("a file in the crate"))
            .with_context(|| format!("failed to create `{}`", dir.display()))?;
        std::fs::write(&path, text).with_context(|| format!("failed to write `{}`", path.display()))?;
    }
    println!("Created the plugin crate `{name}` in {} with the key `{key}`.", dir.display());
    println!("  cargo test                 runs its unit test natively");
    println!("  assay plugin build {}  builds {name}.wasm", dir.display());
    Ok(assay::exit_codes::OK)
}

/// The SDK release this assay speaks to: its major and minor version
/// (`0.1`), which is the host's, since they are released together.
fn sdk_version() -> &'static str {
    let version = env!("CARGO_PKG_VERSION");
    let minor_end = version.match_indices('.').nth(1).map_or(version.len(), |(i, _)| i);
    &version[..minor_end]
}

fn cargo_toml(name: &str, sdk: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
# cdylib: the component; rlib: native unit tests.
crate-type = ["cdylib", "rlib"]

[dependencies]
assay-plugin-sdk = {sdk}
serde_json = "1"

# `assay plugin build` writes the component here.
[package.metadata.assay]
component = "{name}.wasm"

[profile.release]
opt-level = "s"
lto = true
codegen-units = 1

# A crate of its own, even when created inside another workspace.
[workspace]
"#
    )
}

fn lib_rs(name: &str, key: &str) -> String {
    format!(
        r#"//! `{key}`: passes when the response mentions every word of the expected
//! phrase, in any case and any order. Replace it with your own check; the
//! SDK's docs (`cargo doc --open`) and README explain every type.

use assay_plugin_sdk::{{Actual, Json, Matcher, PluginInfo, Verdict, export_matcher}};

/// The matcher.
pub struct Plugin;

impl Matcher for Plugin {{
    fn describe() -> PluginInfo {{
        PluginInfo::new("{name}", env!("CARGO_PKG_VERSION"))
            .matcher("{key}", "the text mentions every word of the expected phrase, in any case")
    }}

    fn evaluate(_key: &str, actual: &Actual, expected: &Json) -> Result<Verdict, String> {{
        // `Err` means "cannot evaluate": an error verdict, never negated.
        let text = actual.as_str().ok_or_else(|| format!("{key} needs a string, found {{}}", actual.describe()))?;
        let phrase = expected.as_str().ok_or("{key} needs the expected phrase as a string")?;
        let words: Vec<String> = text.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase).collect();
        let missing: Vec<&str> =
            phrase.split_whitespace().filter(|w| !words.contains(&w.to_lowercase())).collect();
        // Messages state facts: the host negates the verdict for `not_{key}`.
        Ok(if missing.is_empty() {{
            Verdict::new(true, format!("the text mentions every word of {{phrase:?}}"))
        }} else {{
            Verdict::new(false, format!("the text does not mention {{}}", missing.join(", ")))
        }})
    }}
}}

export_matcher!(Plugin);

#[cfg(test)]
mod tests {{
    use super::*;

    fn check(text: &str, phrase: &str) -> Verdict {{
        Plugin::evaluate("{key}", &Actual::text(text), &phrase.into()).unwrap()
    }}

    #[test]
    fn passes_when_every_word_is_mentioned() {{
        assert!(check("The Beatles came from Liverpool.", "liverpool beatles").pass);
        let verdict = check("The Beatles came from Liverpool.", "beatles london");
        assert!(!verdict.pass);
        assert_eq!(verdict.message, "the text does not mention london");
    }}

    #[test]
    fn a_number_is_not_a_text() {{
        let error = Plugin::evaluate("{key}", &Actual::value(5.into()), &"x".into()).unwrap_err();
        assert_eq!(error, "{key} needs a string, found the number 5");
    }}
}}
"#
    )
}

/// Where Debian's rustc-web puts its compiler, and std's source.
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_STD_SRC: &str = "/usr/lib/rustlib/src/rust/library";

fn build(args: PluginBuildArgs) -> Result<u8> {
    let dir = args.dir.unwrap_or_else(|| PathBuf::from("."));
    let manifest = dir.join("Cargo.toml");
    let (package, component) = read_manifest(&manifest)?;
    // Absolute, because cargo runs in `dir` and would read a relative
    // target directory from there (`my-check/my-check/target`).
    let target_dir = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(target) => std::path::absolute(target)?,
        None => std::path::absolute(dir.join("target"))?,
    };
    let mut cargo = wasm_cargo()?;
    cargo
        .current_dir(&dir)
        .args(["build", "--release", "--lib", "--target", "wasm32-unknown-unknown", "--target-dir"])
        .arg(&target_dir);
    eprintln!("building {package} for wasm32-unknown-unknown");
    let status = cargo.status().context("failed to run cargo")?;
    if !status.success() {
        bail!("the wasm build of `{package}` failed (see cargo's output above)");
    }
    let module_path =
        target_dir.join("wasm32-unknown-unknown/release").join(format!("{}.wasm", package.replace('-', "_")));
    let module = read_component_file(&module_path)
        .with_context(|| format!("failed to read the build `{}`", module_path.display()))?;
    let bytes = wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .map_err(|e| {
            anyhow::anyhow!(
                "failed to make a component of `{}`: {e:#}\n\nConsider exporting the matcher with `export_matcher!` from assay-plugin-sdk",
                module_path.display()
            )
        })?;
    let output = dir.join(&component);
    std::fs::write(&output, &bytes).with_context(|| format!("failed to write `{}`", output.display()))?;
    // Load it as assay will, with nothing granted beyond the default.
    let runtime = Runtime::default();
    let plugin =
        MatcherPlugin::load(&runtime, ComponentSource::File(output.clone()), &bytes, ComponentOptions::default())?;
    let keys: Vec<&str> = plugin.keys().iter().map(|k| k.key.as_str()).collect();
    println!("{}", output.display());
    println!("sha256 {}", sha256_hex(&bytes));
    println!("{} {} provides: {}", plugin.name(), plugin.version(), keys.join(", "));
    Ok(assay::exit_codes::OK)
}

/// The package name and its `[package.metadata.assay] component` (default
/// `NAME.wasm`).
fn read_manifest(manifest: &Path) -> Result<(String, String)> {
    let text = std::fs::read_to_string(manifest).map_err(|e| CliError::File {
        path: manifest.to_owned(),
        message: format!(
            "cannot read it: {e}\n\nConsider the folder of a plugin crate, e.g. one `assay plugin new` made"
        ),
    })?;
    let value: toml::Table =
        toml::from_str(&text).map_err(|e| CliError::File { path: manifest.to_owned(), message: e.to_string() })?;
    let package = value
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str)
        .ok_or_else(|| CliError::File { path: manifest.to_owned(), message: "it has no [package] name".into() })?
        .to_owned();
    let component = value
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("assay"))
        .and_then(|a| a.get("component"))
        .and_then(toml::Value::as_str)
        .map_or_else(|| format!("{package}.wasm"), str::to_owned);
    Ok((package, component))
}

/// `cargo` with a toolchain that can build `wasm32-unknown-unknown`:
/// rustup's when it has the target, else Debian's rustc-web building std
/// from source.
fn wasm_cargo() -> Result<Command> {
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
    Err(CliError::NoWasmToolchain.into())
}
