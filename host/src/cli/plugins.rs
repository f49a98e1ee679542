//! `assay plugins`: lists every loaded plugin with its keys.

use super::args::PluginsArgs;
use anyhow::Result;
use std::io::Write;

pub fn run(args: PluginsArgs) -> Result<u8> {
    let registry = super::check::load_registry(&args.plugins)?;
    let mut out = std::io::stdout().lock();
    for plugin in registry.plugins() {
        writeln!(out, "{} {} ({})", plugin.name(), plugin.version(), plugin.source())?;
        writeln!(out, "  sha256 {}", plugin.sha256())?;
        for key in plugin.keys() {
            writeln!(out, "  {:<12} {}", key.key, key.summary)?;
        }
    }
    Ok(assay::exit_codes::OK)
}
