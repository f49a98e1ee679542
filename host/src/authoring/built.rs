//! What a plugin build is asked and gives, whatever builds it (cargo and
//! wit-component for a Rust crate, componentize-py for a Python folder):
//! the options, the steps worth telling the user about, and the component
//! loaded as assay loads it.

use crate::errors::AuthoringError;
use crate::plugin::{MatcherKey, MatcherPlugin};
use crate::sandbox::{CompileCache, ComponentOptions, ComponentSource, Limits, Runtime, sha256_hex};
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;

/// Why a manifest's `component` path cannot be where the build writes: it
/// must be a relative path that stays in the plugin's folder (a build
/// writes there, and a manifest from elsewhere must not choose to write
/// over the user's files).
pub(super) fn component_outside(component: &str) -> Option<String> {
    let path = Path::new(component);
    let escapes = path.is_absolute()
        || path
            .components()
            .any(|part| matches!(part, Component::ParentDir | Component::RootDir | Component::Prefix(_)));
    (escapes || component.is_empty()).then(|| {
        format!(
            "`component = \"{component}\"` leaves the plugin's folder: name a file in it, such as \"NAME.wasm\" or \"out/NAME.wasm\""
        )
    })
}

/// What to build, and where cargo builds it and prints.
#[derive(Debug)]
pub struct BuildOptions {
    /// The plugin crate's folder.
    pub dir: PathBuf,
    /// cargo's target directory (default: the crate's `target/`). The
    /// command line passes `CARGO_TARGET_DIR` here.
    pub target_dir: Option<PathBuf>,
    /// Where cargo's (or for a Python plugin, componentize-py's) standard
    /// output goes (default: inherited).
    pub cargo_stdout: Stdio,
    /// Where cargo's standard error, its progress and compiler messages,
    /// goes (for a Python plugin, componentize-py's and the traceback of a
    /// metric that fails to import) (default: inherited).
    pub cargo_stderr: Stdio,
}

impl BuildOptions {
    /// The crate in `dir`, built into its own `target/`, cargo printing to
    /// this process's standard output and error.
    pub fn new(dir: impl Into<PathBuf>) -> BuildOptions {
        BuildOptions {
            dir: dir.into(),
            target_dir: None,
            cargo_stdout: Stdio::inherit(),
            cargo_stderr: Stdio::inherit(),
        }
    }
}

/// A step of a build that takes long enough to be worth telling the user
/// about.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildStep {
    /// cargo is building the crate's wasm module.
    Compiling {
        /// The crate's package name.
        package: String,
    },
    /// pip is installing the packages of a Python plugin's
    /// `requirements.txt`.
    InstallingPackages {
        /// The `requirements.txt`.
        requirements: PathBuf,
    },
    /// The packages of a Python plugin's `requirements.txt` are the ones an
    /// earlier build installed.
    PackagesCached {
        /// The `requirements.txt`.
        requirements: PathBuf,
        /// The folder holding them, in assay's cache.
        site: PathBuf,
    },
    /// componentize-py is building a Python plugin.
    Componentizing {
        /// The plugin's name.
        name: String,
        /// The componentize-py version.
        version: String,
    },
}

impl fmt::Display for BuildStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildStep::Compiling { package } => write!(f, "building {package} for wasm32-unknown-unknown"),
            BuildStep::InstallingPackages { requirements } => {
                write!(f, "installing the packages of {} with pip (pure-Python wheels only)", requirements.display())
            }
            BuildStep::PackagesCached { requirements, site } => {
                write!(f, "using the packages of {} installed before, in {}", requirements.display(), site.display())
            }
            BuildStep::Componentizing { name, version } => write!(f, "building {name} with componentize-py {version}"),
        }
    }
}

/// A component a build made, as assay loads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltPlugin {
    /// The component file: `[package.metadata.assay] component` of the
    /// manifest (default `NAME.wasm`), in the crate's folder as given.
    pub component: PathBuf,
    /// Its sha256, lowercase hex: what `[plugins.NAME] sha256` pins.
    pub sha256: String,
    /// The name the plugin gives itself.
    pub name: String,
    /// The version it gives itself.
    pub version: String,
    /// The keys it answers.
    pub keys: Vec<MatcherKey>,
}

/// Loads the component just written to `output` (`bytes`) as assay will,
/// with nothing granted beyond the default, and says what it is. It is
/// compiled into the user's compile cache, as a run would compile it: the
/// first run after a build (a Python plugin takes many seconds to compile)
/// finds it there.
pub(super) fn load_built(output: PathBuf, bytes: &[u8]) -> Result<BuiltPlugin, AuthoringError> {
    let cache = CompileCache::default_dir().map(CompileCache::new);
    let plugin = MatcherPlugin::load(
        &Runtime::with_cache(Limits::default().memory_bytes, cache),
        ComponentSource::File(output.clone()),
        bytes,
        ComponentOptions::default(),
    )
    .map_err(AuthoringError::Load)?;
    Ok(BuiltPlugin {
        component: output,
        sha256: sha256_hex(bytes),
        name: plugin.name().to_owned(),
        version: plugin.version().to_owned(),
        keys: plugin.keys().to_vec(),
    })
}
