//! `assay plugins`: lists every loaded plugin with its label and keys, and
//! which keys `[keys]` gives to another plugin (each compiled, or loaded
//! from the compile cache, as a run would); `--precompile` lists promptfoo's
//! built-ins too, so that all are in the cache; `--lock` pins the plugins
//! of the configuration in assay.toml ([`Project::lock`]) and says what it
//! pinned.

use super::CliError;
use super::args::PluginsArgs;
use crate::config::PluginSource;
use crate::project::PinEntry;
use crate::project::Project;
use crate::sandbox::CacheStatus;
use anyhow::Result;
use std::io::Write;

pub fn run(args: PluginsArgs) -> Result<u8> {
    let project = super::project::open(&args.project, None, None)?;
    if args.lock {
        return lock(&project);
    }
    let registry = match args.precompile {
        true => std::sync::Arc::new(project.every_plugin()?),
        false => project.registry()?,
    };
    let mut out = std::io::stdout().lock();
    for (label, plugin) in registry.labelled() {
        let labelled = if label == plugin.name() { String::new() } else { format!(", labelled `{label}`") };
        // A community plugin by its reference, not its file in the store.
        let source = match project.config().plugins.get(label).map(|p| p.source()) {
            Some(Ok(PluginSource::Oci(reference))) => format!("oci `{reference}`"),
            Some(Ok(PluginSource::Url(url))) => format!("url `{url}`"),
            _ => plugin.source().to_string(),
        };
        writeln!(out, "{} {} ({source}){labelled}", plugin.name(), plugin.version())?;
        writeln!(out, "  sha256 {}", plugin.sha256())?;
        // A plugin is loaded on first use: listing it loads it, so
        // that what the listing says of the cache is what a run meets.
        let loaded = plugin.get().map_err(|cause| anyhow::anyhow!("{cause}"))?;
        let cache = match loaded.cache_status() {
            CacheStatus::Hit => "loaded from the compile cache",
            CacheStatus::Compiled => "compiled, and cached",
            CacheStatus::Rebuilt => "compiled (a bad cache file was replaced)",
            CacheStatus::Uncached => "compiled (no cache)",
            CacheStatus::Embedded => "precompiled, embedded in assay (nothing compiled)",
        };
        writeln!(out, "  {cache}")?;
        let keys = plugin.keys();
        let winners: Vec<Option<&str>> =
            keys.iter().map(|k| registry.label_for(&k.key).filter(|winner| *winner != label)).collect();
        if !keys.is_empty() && winners.iter().all(Option::is_some) {
            writeln!(out, "  shadowed: [keys] gives every key it has to other plugins")?;
        }
        for (key, winner) in keys.iter().zip(winners) {
            match winner {
                None => writeln!(out, "  {:<12} {}", key.key, key.summary)?,
                Some(winner) => writeln!(out, "  {:<12} {} [shadowed by `{winner}`]", key.key, key.summary)?,
            }
        }
    }
    Ok(crate::exit_codes::OK)
}

/// Pins the project's plugins in its configuration, and says what it
/// pinned.
fn lock(project: &Project) -> Result<u8> {
    let lock = project.lock().map_err(CliError::from)?;
    let mut out = std::io::stdout().lock();
    for pin in &lock.pins {
        let (label, sha256) = (&pin.label, &pin.sha256);
        match &pin.entry {
            PinEntry::Configured => writeln!(out, "pinned {label} to {sha256}")?,
            PinEntry::Added { path } => {
                writeln!(out, "pinned {label} to {sha256} (added [plugins.{label}] for `{path}`)")?
            }
        }
    }
    Ok(crate::exit_codes::OK)
}
