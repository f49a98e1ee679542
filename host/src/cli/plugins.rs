//! `assay plugins`: lists every loaded plugin with its keys; `--lock` pins
//! the configured ones in assay.toml.

use super::UsageError;
use super::args::PluginsArgs;
use super::project::Project;
use anyhow::{Context, Result};
use assay::config::CONFIG_FILE;
use assay::plugin::{CacheStatus, read_component_file, sha256_hex};
use std::io::Write;
use std::path::PathBuf;

pub fn run(args: PluginsArgs) -> Result<u8> {
    let project = Project::open(&args.project)?;
    if args.lock {
        return lock(&project, args.project.config.clone().unwrap_or_else(|| PathBuf::from(CONFIG_FILE)));
    }
    let registry = project.registry()?;
    let mut out = std::io::stdout().lock();
    for plugin in registry.plugins() {
        writeln!(out, "{} {} ({})", plugin.name(), plugin.version(), plugin.source())?;
        writeln!(out, "  sha256 {}", plugin.sha256())?;
        let cache = match plugin.cache_status() {
            CacheStatus::Hit => "loaded from the compile cache",
            CacheStatus::Compiled => "compiled, and cached",
            CacheStatus::Rebuilt => "compiled (a bad cache file was replaced)",
            CacheStatus::Uncached => "compiled (no cache)",
        };
        writeln!(out, "  {cache}")?;
        for key in plugin.keys() {
            writeln!(out, "  {:<12} {}", key.key, key.summary)?;
        }
    }
    Ok(assay::exit_codes::OK)
}

/// Writes `sha256 = "…"` into every `[plugins.NAME]` of the configuration,
/// keeping the rest of the file as it is.
fn lock(project: &Project<'_>, path: PathBuf) -> Result<u8> {
    if !path.is_file() {
        return Err(UsageError(format!("no {} to lock (looked for `{}`)", CONFIG_FILE, path.display())).into());
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("failed to read `{}`", path.display()))?;
    let mut document: toml_edit::DocumentMut =
        text.parse().map_err(|e| UsageError(format!("invalid configuration `{}`: {e}", path.display())))?;
    let mut out = std::io::stdout().lock();
    for (label, plugin) in &project.config.plugins {
        let file = project.config.resolve(&plugin.path);
        let bytes = read_component_file(&file).with_context(|| format!("failed to read plugin `{}`", file.display()))?;
        let sha256 = sha256_hex(&bytes);
        document["plugins"][label.as_str()]["sha256"] = toml_edit::value(sha256.clone());
        writeln!(out, "pinned {label} to {sha256}")?;
    }
    std::fs::write(&path, document.to_string()).with_context(|| format!("failed to write `{}`", path.display()))?;
    Ok(assay::exit_codes::OK)
}
