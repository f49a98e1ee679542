//! The plugin SDK as the binary carries it: `assay-plugin-sdk`'s source and
//! the WIT contracts its bindings are generated from, so that `assay plugin
//! new` can write them beside a new plugin ([`SdkDependency::Vendored`]) and
//! someone with only the `assay` binary, Rust and the package registry can
//! build one. The copy is the SDK of this assay's release, file for file
//! (a test compares the list with `plugin-sdk/` and `wit/`), with a
//! manifest of its own in place of the workspace's.
//!
//! [`SdkDependency::Vendored`]: super::SdkDependency::Vendored

/// This assay's release as a Cargo requirement: its major and minor
/// version (`0.1`), which the SDK shares, since they are released together.
pub fn release_minor() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let minor_end = version.match_indices('.').nth(1).map_or(version.len(), |(i, _)| i);
    version[..minor_end].to_owned()
}

/// Where a scaffold puts the SDK, relative to the plugin crate.
pub const VENDORED_DIR: &str = "vendor/assay-plugin-sdk";

/// The SDK's files, relative to its folder (the WIT under `wit/`).
const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../../../plugin-sdk/README.md")),
    ("src/agent.rs", include_str!("../../../plugin-sdk/src/agent.rs")),
    ("src/bindings.rs", include_str!("../../../plugin-sdk/src/bindings.rs")),
    ("src/capability.rs", include_str!("../../../plugin-sdk/src/capability.rs")),
    ("src/embeddings.rs", include_str!("../../../plugin-sdk/src/embeddings.rs")),
    ("src/export.rs", include_str!("../../../plugin-sdk/src/export.rs")),
    ("src/judge.rs", include_str!("../../../plugin-sdk/src/judge.rs")),
    ("src/lib.rs", include_str!("../../../plugin-sdk/src/lib.rs")),
    ("src/log.rs", include_str!("../../../plugin-sdk/src/log.rs")),
    ("src/matcher.rs", include_str!("../../../plugin-sdk/src/matcher.rs")),
    ("src/params.rs", include_str!("../../../plugin-sdk/src/params.rs")),
    ("wit/README.md", include_str!("../../../wit/README.md")),
    ("wit/agent/agent.wit", include_str!("../../../wit/agent/agent.wit")),
    ("wit/plugin-0.3/plugin.wit", include_str!("../../../wit/plugin-0.3/plugin.wit")),
    ("wit/plugin-0.2/plugin.wit", include_str!("../../../wit/plugin-0.2/plugin.wit")),
    ("wit/plugin/plugin.wit", include_str!("../../../wit/plugin/plugin.wit")),
];

/// The SDK's manifest outside assay's workspace: the workspace's versions
/// and features written out.
fn manifest() -> String {
    format!(
        r#"# assay-plugin-sdk {version}, as `assay plugin new` vendors it: the SDK of
# the assay that made this plugin. Commit it with the plugin, so that a
# teammate builds the same; replace the dependency with `"{minor}"` from
# crates.io once you prefer the published release.
[package]
name = "assay-plugin-sdk"
description = "Write assay matcher plugins (and in-process agents) as WebAssembly components"
version = "{version}"
edition = "2024"
license = "Apache-2.0"
rust-version = "1.95"
publish = false

[dependencies]
serde_json = {{ version = "1", features = ["preserve_order", "float_roundtrip"] }}

[target.'cfg(target_arch = "wasm32")'.dependencies]
wit-bindgen = {{ version = "0.46", default-features = false, features = ["macros", "realloc", "std"] }}
"#,
        version = env!("CARGO_PKG_VERSION"),
        minor = release_minor(),
    )
}

/// Every file of the vendored SDK: (path relative to [`VENDORED_DIR`],
/// contents), its manifest first.
pub fn files() -> Vec<(String, String)> {
    let mut files = vec![("Cargo.toml".to_owned(), manifest())];
    files.extend(FILES.iter().map(|(path, text)| ((*path).to_owned(), (*text).to_owned())));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// The files under `dir` (relative to it), recursively, that `keep` wants.
    fn listed(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(root, &path, keep, out);
                } else if keep(&path) {
                    out.push(path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let mut out = Vec::new();
        walk(dir, dir, keep, &mut out);
        out
    }

    #[test]
    fn the_vendored_sdk_is_every_file_of_the_sdk_and_the_wit() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut expected: Vec<String> = listed(&root.join("plugin-sdk/src"), &|_| true)
            .into_iter()
            .map(|path| format!("src/{path}"))
            .chain(listed(&root.join("wit"), &|_| true).into_iter().map(|path| format!("wit/{path}")))
            .chain(["README.md".to_owned()])
            .collect();
        expected.sort();
        let mut carried: Vec<String> = FILES.iter().map(|(path, _)| (*path).to_owned()).collect();
        carried.sort();
        assert_eq!(carried, expected, "add the SDK's new files to authoring/sdk.rs");
    }

    #[test]
    fn the_manifest_has_the_workspaces_versions_and_features() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let manifest = manifest();
        for dependency in ["serde_json", "wit-bindgen"] {
            let line = workspace.lines().find(|line| line.starts_with(&format!("{dependency} = "))).unwrap();
            assert!(manifest.contains(line), "{dependency}: the workspace has `{line}`\n{manifest}");
        }
        let sdk = std::fs::read_to_string(root.join("plugin-sdk/Cargo.toml")).unwrap();
        let description = sdk.lines().find(|line| line.starts_with("description = ")).unwrap();
        assert!(manifest.contains(description));
        for key in ["edition", "license", "rust-version"] {
            let line = workspace.lines().find(|line| line.starts_with(&format!("{key} = "))).unwrap();
            assert!(manifest.contains(line), "{key}: the workspace has `{line}`");
        }
    }
}
