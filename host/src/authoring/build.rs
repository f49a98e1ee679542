//! A plugin crate built into a component: its manifest read, cargo run for
//! `wasm32-unknown-unknown` (its output where the caller says), the module
//! made a component with wit-component, written where the manifest says,
//! and loaded as assay would load it, with nothing granted.

use super::built::{BuildOptions, BuildStep, BuiltPlugin, component_outside, load_built};
use super::python;
use super::toolchain::wasm_cargo;
use crate::errors::{AuthoringError, ManifestErrorKind};
use crate::sandbox::read_component_file;
use std::path::Path;

/// Builds the plugin crate in `options.dir` into a component and checks it
/// by loading it. `progress` is told each step as it starts.
///
/// A folder with a `pyproject.toml` and no `Cargo.toml` is a Python plugin
/// (one `assay plugin new --python` made): it is built with componentize-py
/// instead (see [`super::python`]), its output going where cargo's would.
pub fn build(options: BuildOptions, mut progress: impl FnMut(&BuildStep)) -> Result<BuiltPlugin, AuthoringError> {
    let dir = &options.dir;
    if python::is_python_plugin(dir) {
        return python::build(options, progress);
    }
    let (package, component) = read_manifest(&dir.join("Cargo.toml"))?;
    // Absolute, because cargo runs in `dir` and would read a relative
    // target directory from there (`my-check/my-check/target`).
    let target_dir = options.target_dir.unwrap_or_else(|| dir.join("target"));
    let target_dir =
        std::path::absolute(&target_dir).map_err(|cause| AuthoringError::Absolute { path: target_dir, cause })?;
    let mut cargo = wasm_cargo()?;
    cargo
        .current_dir(dir)
        .args(["build", "--release", "--lib", "--target", "wasm32-unknown-unknown", "--target-dir"])
        .arg(&target_dir)
        .stdout(options.cargo_stdout)
        .stderr(options.cargo_stderr);
    progress(&BuildStep::Compiling { package: package.clone() });
    let status = cargo.status().map_err(AuthoringError::Cargo)?;
    if !status.success() {
        return Err(AuthoringError::BuildFailed { package });
    }
    let module_path =
        target_dir.join("wasm32-unknown-unknown/release").join(format!("{}.wasm", package.replace('-', "_")));
    let module = read_component_file(&module_path)
        .map_err(|cause| AuthoringError::ReadModule { path: module_path.clone(), cause: cause.to_string() })?;
    let bytes = wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .map_err(|cause| AuthoringError::Componentize { path: module_path, cause: format!("{cause:#}") })?;
    let output = dir.join(&component);
    std::fs::write(&output, &bytes).map_err(|cause| AuthoringError::Write { path: output.clone(), cause })?;
    load_built(output, &bytes)
}

/// The package name and its `[package.metadata.assay] component` (default
/// `NAME.wasm`).
fn read_manifest(manifest: &Path) -> Result<(String, String), AuthoringError> {
    let fail = |kind| AuthoringError::Manifest { path: manifest.to_owned(), kind };
    let text = std::fs::read_to_string(manifest).map_err(|e| fail(ManifestErrorKind::Read(e)))?;
    let value: toml::Table = toml::from_str(&text).map_err(|e| fail(ManifestErrorKind::Syntax(e.to_string())))?;
    let package = value
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str)
        .ok_or_else(|| fail(ManifestErrorKind::NoPackageName))?
        .to_owned();
    let component = value
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("assay"))
        .and_then(|a| a.get("component"))
        .and_then(toml::Value::as_str)
        .map_or_else(|| format!("{package}.wasm"), str::to_owned);
    if let Some(why) = component_outside(&component) {
        return Err(fail(ManifestErrorKind::ComponentOutside(why)));
    }
    Ok((package, component))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_that_is_no_plugin_crate_is_refused_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        let refused =
            |progress_told: &mut bool| build(BuildOptions::new(dir.path()), |_| *progress_told = true).unwrap_err();
        let mut told = false;
        let error = refused(&mut told);
        assert!(
            matches!(&error, AuthoringError::Manifest { path, kind: ManifestErrorKind::Read(_) } if *path == manifest)
        );
        assert!(error.is_usage() && !told);
        assert!(
            error.to_string().ends_with("\n\nConsider the folder of a plugin crate, e.g. one `assay plugin new` made")
        );

        std::fs::write(&manifest, "[package\n").unwrap();
        assert!(matches!(refused(&mut told), AuthoringError::Manifest { kind: ManifestErrorKind::Syntax(_), .. }));
        std::fs::write(&manifest, "[package]\nversion = \"0.1.0\"\n").unwrap();
        let error = refused(&mut told);
        assert_eq!(error.to_string(), format!("`{}`: it has no [package] name", manifest.display()));
        assert!(!told);
    }

    #[test]
    fn the_component_is_named_by_the_manifest_or_after_the_package() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(&manifest, "[package]\nname = \"my-check\"\n").unwrap();
        assert_eq!(read_manifest(&manifest).unwrap(), ("my-check".into(), "my-check.wasm".into()));
        std::fs::write(&manifest, "[package]\nname = \"x\"\n[package.metadata.assay]\ncomponent = \"out/y.wasm\"\n")
            .unwrap();
        assert_eq!(read_manifest(&manifest).unwrap(), ("x".into(), "out/y.wasm".into()));
    }

    #[test]
    fn a_component_path_leaving_the_folder_is_refused_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        for component in ["../x.wasm", "/tmp/x.wasm", "out/../../x.wasm", ""] {
            let text = format!("[package]\nname = \"x\"\n[package.metadata.assay]\ncomponent = \"{component}\"\n");
            std::fs::write(&manifest, text).unwrap();
            let mut told = false;
            let error = build(BuildOptions::new(dir.path()), |_| told = true).unwrap_err();
            assert!(error.to_string().contains("leaves the plugin's folder"), "{component}: {error}");
            assert!(!told, "{component}: the build started");
        }
    }
}
