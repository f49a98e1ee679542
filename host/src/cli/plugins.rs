//! `assay plugins`: lists every loaded plugin with its label and keys, and
//! which keys `[keys]` gives to another plugin; `--lock` pins the plugins
//! of the configuration in assay.toml, adding a pinned `[plugins.NAME]` for
//! each component `.assay/plugins/` loads.

use super::CliError;
use super::args::PluginsArgs;
use anyhow::{Context, Result};
use assay::Project;
use assay::config::{CONFIG_FILE, PLUGINS_DIR};
use assay::project::PluginOrigin;
use assay::sandbox::{CacheStatus, read_component_file, sha256_hex};
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn run(args: PluginsArgs) -> Result<u8> {
    let project = super::project::open(&args.project, None, None)?;
    if args.lock {
        return lock(&project, project.config_file().to_path_buf());
    }
    let registry = project.registry()?;
    let mut out = std::io::stdout().lock();
    for (label, plugin) in registry.labelled() {
        let labelled = if label == plugin.name() { String::new() } else { format!(", labelled `{label}`") };
        writeln!(out, "{} {} ({}){labelled}", plugin.name(), plugin.version(), plugin.source())?;
        writeln!(out, "  sha256 {}", plugin.sha256())?;
        let cache = match plugin.cache_status() {
            CacheStatus::Hit => "loaded from the compile cache",
            CacheStatus::Compiled => "compiled, and cached",
            CacheStatus::Rebuilt => "compiled (a bad cache file was replaced)",
            CacheStatus::Uncached => "compiled (no cache)",
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
    Ok(assay::exit_codes::OK)
}

/// Writes `sha256 = "…"` into every `[plugins.NAME]` of the configuration,
/// and a pinned `[plugins.NAME]` for each component `.assay/plugins/`
/// loads, keeping the rest of the file as it is. With no `assay.toml` (and
/// no `--config`, which must name a file), and components in
/// `.assay/plugins/` to pin, it creates `assay.toml`. `--plugin` files are not part of the configuration, and
/// not pinned.
fn lock(project: &Project, path: PathBuf) -> Result<u8> {
    let files = project.plugin_files()?;
    let auto_loaded = files.iter().any(|f| matches!(f.origin, PluginOrigin::AutoLoaded));
    let text = if path.is_file() {
        std::fs::read_to_string(&path).with_context(|| format!("failed to read `{}`", path.display()))?
    } else if auto_loaded {
        String::new()
    } else {
        return Err(CliError::File { path, message: format!("there is no {CONFIG_FILE} to lock") }.into());
    };
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| CliError::File { path: path.clone(), message: format!("invalid configuration: {e}") })?;
    let mut out = std::io::stdout().lock();
    for file in &files {
        let label = file.label.as_str();
        let sha256 = || -> Result<String> {
            let bytes = read_component_file(&file.path)
                .with_context(|| format!("failed to read plugin `{}`", file.path.display()))?;
            Ok(sha256_hex(&bytes))
        };
        match file.origin {
            PluginOrigin::Configured(_) => {
                let sha256 = sha256()?;
                document["plugins"][label]["sha256"] = toml_edit::value(sha256.clone());
                writeln!(out, "pinned {label} to {sha256}")?;
            }
            PluginOrigin::AutoLoaded => {
                let sha256 = sha256()?;
                let relative = Path::new(PLUGINS_DIR).join(file.path.file_name().expect("a listed file"));
                let relative = relative.to_string_lossy().replace('\\', "/");
                plugins_table(&mut document, &path)?.insert(label, pinned_entry(&relative, &sha256));
                writeln!(out, "pinned {label} to {sha256} (added [plugins.{label}] for `{relative}`)")?;
            }
            PluginOrigin::Extra => {}
        }
    }
    std::fs::write(&path, document.to_string()).with_context(|| format!("failed to write `{}`", path.display()))?;
    Ok(assay::exit_codes::OK)
}

/// The `[plugins]` table of the document, made if missing (implicit, so
/// that only its `[plugins.NAME]` headers are written).
fn plugins_table<'d>(document: &'d mut toml_edit::DocumentMut, path: &Path) -> Result<&'d mut toml_edit::Table> {
    if !document.contains_key("plugins") {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        document.insert("plugins", toml_edit::Item::Table(table));
    }
    document["plugins"]
        .as_table_mut()
        .ok_or_else(|| CliError::File { path: path.to_owned(), message: "`plugins` is not a table".into() }.into())
}

/// `path = "…"` and `sha256 = "…"`, as a `[plugins.NAME]` table.
fn pinned_entry(path: &str, sha256: &str) -> toml_edit::Item {
    let mut entry = toml_edit::Table::new();
    entry["path"] = toml_edit::value(path);
    entry["sha256"] = toml_edit::value(sha256);
    toml_edit::Item::Table(entry)
}
