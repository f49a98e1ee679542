//! `cargo xtask wit-package`: each WIT package of `wit/` encoded as a
//! binary WIT package (a component that holds only types), the form `wkg
//! wit build` makes and `wkg publish` pushes to a registry, written to
//! `target/wit/NAMESPACE-NAME-VERSION.wasm`.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The WIT package folders, each self-contained (no `deps/`).
const PACKAGES: &[&str] = &["wit/plugin-0.3", "wit/plugin-0.2", "wit/plugin", "wit/agent"];

/// Encodes every package of [`PACKAGES`] into `out`, and returns the files
/// written.
pub fn write_all(root: &Path, out: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut written = Vec::new();
    for folder in PACKAGES {
        let (file_name, bytes) = encode(&root.join(folder))?;
        let path = out.join(file_name);
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// The binary WIT package of the folder `dir`, and its file name.
fn encode(dir: &Path) -> Result<(String, Vec<u8>)> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_dir(dir).with_context(|| format!("parsing the WIT of {}", dir.display()))?;
    let name = &resolve.packages[package].name;
    let Some(version) = &name.version else { bail!("{}: the package `{name}` has no version", dir.display()) };
    let file_name = format!("{}-{}-{version}.wasm", name.namespace, name.name);
    let bytes = wit_component::encode(&resolve, package).with_context(|| format!("encoding {name}"))?;
    Ok((file_name, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_package_encodes_and_decodes_to_itself() {
        let root = crate::workspace_root();
        let out = tempdir();
        let written = write_all(&root, &out).unwrap();
        let names: Vec<String> =
            written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(
            names,
            ["assay-plugin-0.3.0.wasm", "assay-plugin-0.2.0.wasm", "assay-plugin-0.1.0.wasm", "assay-agent-0.1.0.wasm"]
        );
        for path in &written {
            let bytes = std::fs::read(path).unwrap();
            let decoded = wit_component::decode(&bytes).unwrap();
            let package = &decoded.resolve().packages[decoded.package()];
            let expected = path.file_stem().unwrap().to_string_lossy().into_owned();
            let version = package.name.version.as_ref().unwrap();
            assert_eq!(format!("{}-{}-{version}", package.name.namespace, package.name.name), expected);
            assert!(!package.interfaces.is_empty() && !package.worlds.is_empty(), "{expected}");
        }
        std::fs::remove_dir_all(out).unwrap();
    }

    fn tempdir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("assay-wit-package-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }
}
