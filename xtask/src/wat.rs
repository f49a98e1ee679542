//! Assembles the hand-written fixture plugins of `fixtures/plugins/wat/`:
//! hostile components that cannot be written in Rust (a core module with a
//! start function, an import no Rust plugin of this workspace has).
//!
//! Each `NAME.wat` is a core module following the component-model naming
//! conventions of `wit-component` (`INTERFACE#FUNCTION` exports,
//! `cabi_realloc`, `memory`) and starts with a line `;; world: WORLD` naming
//! the fully qualified world it implements, from `wit/plugin`, `wit/agent` or
//! `fixtures/plugins/wat/wit` (with its `deps/`). It is assembled, given that
//! world's component type, and turned into the component `NAME.wasm` next to
//! it. Nothing here depends on a Rust toolchain, so the result is the same on
//! every machine.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use wit_component::StringEncoding;
use wit_parser::Resolve;

/// Where the WAT fixtures live, relative to the workspace root.
const DIR: &str = "fixtures/plugins/wat";

/// The line that names a fixture's world.
const WORLD_PREFIX: &str = ";; world: ";

/// One assembled fixture.
pub struct WatComponent {
    /// Where the committed component lives.
    pub output: PathBuf,
    /// The component.
    pub bytes: Vec<u8>,
}

/// Assembles every `fixtures/plugins/wat/*.wat`, in file-name order.
pub fn build_all(root: &Path) -> Result<Vec<WatComponent>> {
    let dir = root.join(DIR);
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("failed to read {}", dir.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("failed to read {}", dir.display()))?;
    sources.retain(|path| path.extension().is_some_and(|ext| ext == "wat"));
    sources.sort();
    if sources.is_empty() {
        return Ok(Vec::new());
    }

    let resolve = resolve(root)?;
    sources
        .iter()
        .map(|source| {
            let bytes = assemble(&resolve, source)
                .with_context(|| format!("failed to make a component of {}", source.display()))?;
            Ok(WatComponent { output: source.with_extension("wasm"), bytes })
        })
        .collect()
}

/// The plugin and agent contracts, then the fixtures' own WIT (which may name
/// them).
fn resolve(root: &Path) -> Result<Resolve> {
    let mut resolve = Resolve::default();
    resolve.push_dir(root.join("wit/plugin")).context("failed to parse wit/plugin")?;
    resolve.push_dir(root.join("wit/agent")).context("failed to parse wit/agent")?;
    let extra = root.join(DIR).join("wit");
    if extra.is_dir() {
        resolve.push_dir(&extra).with_context(|| format!("failed to parse {}", extra.display()))?;
    }
    Ok(resolve)
}

/// Assembles one fixture into a component.
fn assemble(resolve: &Resolve, source: &Path) -> Result<Vec<u8>> {
    let text = std::fs::read_to_string(source).with_context(|| format!("failed to read {}", source.display()))?;
    let world_name =
        text.lines().next().and_then(|line| line.strip_prefix(WORLD_PREFIX)).map(str::trim).with_context(|| {
            format!("the first line must name the world, e.g. `{WORLD_PREFIX}assay:plugin/matcher-plugin@0.1.0`")
        })?;
    let packages: Vec<_> = resolve.packages.iter().map(|(id, _)| id).collect();
    let world = resolve.select_world(&packages, Some(world_name))?;
    let mut module = ::wat::parse_str(&text).map_err(|mut error| {
        error.set_path(source);
        error
    })?;
    wit_component::embed_component_metadata(&mut module, resolve, world, StringEncoding::UTF8)?;
    wit_component::ComponentEncoder::default().module(&module)?.validate(true).encode()
}
