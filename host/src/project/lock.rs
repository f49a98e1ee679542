//! Locking: [`Project::lock`] pins every plugin of the configuration to the
//! sha256 of its file in `assay.toml`, adding a pinned `[plugins.NAME]` for
//! each component `.assay/plugins/` loads, and keeps the rest of the file
//! (comments, order, layout) as it is.

use super::{PluginOrigin, Project};
use crate::config::PLUGINS_DIR;
use crate::errors::LockError;
use crate::sandbox::{read_component_file, sha256_hex};
use std::path::{Path, PathBuf};

/// What [`Project::lock`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    /// The configuration file written.
    pub file: PathBuf,
    /// Every plugin pinned, in the order they load.
    pub pins: Vec<Pin>,
}

/// One plugin pinned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// Its label: the `NAME` of `[plugins.NAME]`.
    pub label: String,
    /// The sha256 of its file, lowercase hex.
    pub sha256: String,
    /// Whether its `[plugins.NAME]` was there or was added.
    pub entry: PinEntry,
}

/// The `[plugins.NAME]` a pin was written into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PinEntry {
    /// The configuration's own.
    Configured,
    /// One added for a component of `.assay/plugins/`, with this `path`
    /// (relative to the configuration, `/`-separated).
    Added {
        /// The entry's `path`, e.g. `.assay/plugins/mine.wasm`.
        path: String,
    },
}

impl Project {
    /// Writes `sha256 = "…"` into every `[plugins.NAME]` of the
    /// configuration, and a pinned `[plugins.NAME]` for each component
    /// `.assay/plugins/` loads, keeping the rest of the file as it is. With
    /// no configuration file and components in `.assay/plugins/` to pin, it
    /// creates one. The options' extra plugin files are not part of the
    /// configuration, and not pinned. Nothing is written unless every file
    /// could be hashed.
    pub fn lock(&self) -> Result<Lock, LockError> {
        let files = self.plugin_files()?;
        let auto_loaded = files.iter().any(|f| matches!(f.origin, PluginOrigin::AutoLoaded));
        if !self.config_file().is_file() && !auto_loaded {
            return Err(LockError::NoConfig { path: self.config_file().to_path_buf() });
        }
        let (path, mut document) = self.config_document()?;
        let mut pins = Vec::new();
        for file in &files {
            let label = file.label.as_str();
            let entry = match file.origin {
                PluginOrigin::Configured(_) => PinEntry::Configured,
                PluginOrigin::AutoLoaded => {
                    let relative = Path::new(PLUGINS_DIR).join(file.path.file_name().expect("a listed file"));
                    PinEntry::Added { path: relative.to_string_lossy().replace('\\', "/") }
                }
                PluginOrigin::Extra => continue,
            };
            let bytes = read_component_file(&file.path)
                .map_err(|cause| LockError::ReadPlugin { path: file.path.clone(), cause: cause.to_string() })?;
            let sha256 = sha256_hex(&bytes);
            match &entry {
                PinEntry::Configured => document["plugins"][label]["sha256"] = toml_edit::value(&sha256),
                PinEntry::Added { path: relative } => {
                    plugins_table(&mut document, &path)?.insert(label, pinned_entry(relative, &sha256));
                }
            }
            pins.push(Pin { label: label.to_owned(), sha256, entry });
        }
        std::fs::write(&path, document.to_string()).map_err(|cause| LockError::Write { path: path.clone(), cause })?;
        Ok(Lock { file: path, pins })
    }
}

impl Project {
    /// The configuration file and its document, to edit keeping its
    /// comments and layout (empty when there is no file yet).
    pub(super) fn config_document(&self) -> Result<(PathBuf, toml_edit::DocumentMut), LockError> {
        let path = self.config_file().to_path_buf();
        let text = match path.is_file() {
            true => std::fs::read_to_string(&path).map_err(|cause| LockError::Read { path: path.clone(), cause })?,
            false => String::new(),
        };
        let document = text
            .parse()
            .map_err(|e| LockError::Invalid { path: path.clone(), message: format!("invalid configuration: {e}") })?;
        Ok((path, document))
    }
}

/// The `[plugins]` table of the document, made if missing (implicit, so
/// that only its `[plugins.NAME]` headers are written).
pub(super) fn plugins_table<'d>(
    document: &'d mut toml_edit::DocumentMut,
    path: &Path,
) -> Result<&'d mut toml_edit::Table, LockError> {
    if !document.contains_key("plugins") {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        document.insert("plugins", toml_edit::Item::Table(table));
    }
    document["plugins"]
        .as_table_mut()
        .ok_or_else(|| LockError::Invalid { path: path.to_owned(), message: "`plugins` is not a table".into() })
}

/// `path = "…"` and `sha256 = "…"`, as a `[plugins.NAME]` table.
fn pinned_entry(path: &str, sha256: &str) -> toml_edit::Item {
    let mut entry = toml_edit::Table::new();
    entry["path"] = toml_edit::value(path);
    entry["sha256"] = toml_edit::value(sha256);
    toml_edit::Item::Table(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::ProjectOptions;
    use crate::plugin::BUILTIN_MATCHERS;

    const CONFIG: &str = "# my plugins\n[plugins.mine]\npath = \"mine.wasm\" # keep this comment\nsha256 = \"00\"\n";

    /// A project in `dir` with `assay.toml` as `config` says, `mine.wasm`,
    /// `.assay/plugins/auto.wasm` and `extra.wasm` (the stock component,
    /// each with a tag of its own appended, so that each has its own
    /// sha256), opened with `extra.wasm` as an extra plugin.
    fn project(dir: &Path, config: &str) -> Project {
        for (file, tag) in [("mine.wasm", 1), (".assay/plugins/auto.wasm", 2), ("extra.wasm", 3)] {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            // A custom section (id 0): its size, its name's length, the
            // name `t`, and the tag.
            let mut bytes = BUILTIN_MATCHERS[0].bytes.to_vec();
            bytes.extend([0, 3, 1, b't', tag]);
            std::fs::write(path, bytes).unwrap();
        }
        std::fs::write(dir.join("assay.toml"), config).unwrap();
        Project::open(ProjectOptions {
            config: Some(dir.join("assay.toml")),
            plugins: vec![dir.join("extra.wasm")],
            no_cache: true,
            no_answer_cache: true,
            environment: Some(Default::default()),
            ..ProjectOptions::default()
        })
        .unwrap()
    }

    fn sha256_of(path: &Path) -> String {
        sha256_hex(&std::fs::read(path).unwrap())
    }

    #[test]
    fn lock_pins_the_configured_and_auto_loaded_plugins_and_keeps_the_comments() {
        let dir = tempfile::tempdir().unwrap();
        let lock = project(dir.path(), CONFIG).lock().unwrap();
        let (mine, auto) =
            (sha256_of(&dir.path().join("mine.wasm")), sha256_of(&dir.path().join(".assay/plugins/auto.wasm")));
        assert_ne!(mine, auto);
        let added = PinEntry::Added { path: ".assay/plugins/auto.wasm".into() };
        assert_eq!(
            lock,
            Lock {
                file: dir.path().join("assay.toml"),
                pins: vec![
                    Pin { label: "mine".into(), sha256: mine.clone(), entry: PinEntry::Configured },
                    Pin { label: "auto".into(), sha256: auto.clone(), entry: added },
                ],
            }
        );
        let text = std::fs::read_to_string(&lock.file).unwrap();
        assert_eq!(
            text,
            format!(
                "# my plugins\n[plugins.mine]\npath = \"mine.wasm\" # keep this comment\nsha256 = \"{mine}\"\n\n[plugins.auto]\npath = \".assay/plugins/auto.wasm\"\nsha256 = \"{auto}\"\n"
            )
        );
        // Reopened, the component of `.assay/plugins/` is a configured
        // plugin, listed once.
        let reopened = project(dir.path(), &text);
        let files = reopened.plugin_files().unwrap();
        let listed: Vec<(&str, bool)> =
            files.iter().map(|f| (f.label.as_str(), matches!(f.origin, PluginOrigin::Configured(_)))).collect();
        assert_eq!(listed, [("auto", true), ("mine", true), ("extra", false)]);
    }

    #[test]
    fn lock_writes_nothing_unless_every_plugin_can_be_hashed() {
        let dir = tempfile::tempdir().unwrap();
        let config = format!("{CONFIG}\n[plugins.gone]\npath = \"gone.wasm\"\n");
        let error = project(dir.path(), &config).lock().unwrap_err();
        assert!(matches!(&error, LockError::ReadPlugin { path, .. } if path.ends_with("gone.wasm")), "{error}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("failed to read plugin `{}`: ", dir.path().join("gone.wasm").display()))
        );
        assert!(!error.is_usage());
        assert_eq!(std::fs::read_to_string(dir.path().join("assay.toml")).unwrap(), config);
    }

    #[test]
    fn with_no_configuration_lock_makes_one_for_auto_loaded_plugins_and_else_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("assay.toml");
        let project = project(dir.path(), "");
        std::fs::remove_file(&file).unwrap();
        let lock = project.lock().unwrap();
        let auto = sha256_of(&dir.path().join(".assay/plugins/auto.wasm"));
        assert_eq!(lock.pins.iter().map(|pin| pin.label.as_str()).collect::<Vec<_>>(), ["auto"]);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            format!("[plugins.auto]\npath = \".assay/plugins/auto.wasm\"\nsha256 = \"{auto}\"\n")
        );

        std::fs::remove_file(&file).unwrap();
        std::fs::remove_dir_all(dir.path().join(".assay")).unwrap();
        let error = project.lock().unwrap_err();
        assert_eq!(error.to_string(), format!("`{}`: there is no assay.toml to lock", file.display()));
        assert!(error.is_usage() && !file.exists());
    }
}
