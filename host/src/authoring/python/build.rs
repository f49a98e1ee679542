//! A Python metric plugin built into a component: its `pyproject.toml`
//! read, the virtual environment with the pinned componentize-py found
//! (never installed: the error says how), the folder's modules staged with
//! the glue in a temporary folder, the packages of its `requirements.txt`
//! installed (`packages.rs`), componentize-py run there with both on its
//! path, and the component written where `[tool.assay] component` says and
//! loaded as assay would load it.

use super::componentize_py_version;
use super::packages;
use super::requirements::Requirements;
use crate::authoring::built::{BuildOptions, BuildStep, BuiltPlugin, component_outside, load_built};
use crate::errors::{AuthoringError, ManifestErrorKind, RequirementsErrorKind};
use crate::sandbox::CompileCache;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The glue: the matcher export calling each metric's `evaluate`.
const GLUE: &str = include_str!("assay_app.py");
/// The script that calls componentize-py.
const COMPONENTIZE: &str = include_str!("componentize.py");
/// The contract the component is built against: the current one.
const WIT: &str = include_str!("../../../../wit/plugin-0.2/plugin.wit");
/// The world it exports: a pure matcher, which imports only the log.
const WORLD: &str = "matcher-plugin";
/// The modules the build writes next to the plugin's own: no file of the
/// plugin may have these names.
const GLUE_MODULES: [&str; 2] = ["assay_app.py", "assay_plugin.py"];

/// Whether `dir` is a Python plugin: a `pyproject.toml` and no
/// `Cargo.toml`.
pub(in crate::authoring) fn is_python_plugin(dir: &Path) -> bool {
    !dir.join("Cargo.toml").exists() && dir.join("pyproject.toml").is_file()
}

/// What `pyproject.toml` says about the plugin.
#[derive(Debug, PartialEq, Eq)]
struct PythonProject {
    /// `[project] name`.
    name: String,
    /// `[project] version` (default `0.1.0`).
    version: String,
    /// The keys: the metric files of `[tool.assay] metrics`, without `.py`.
    keys: Vec<String>,
    /// `[tool.assay] component` (default `NAME.wasm`), relative to the
    /// folder.
    component: String,
}

/// Builds the Python plugin in `options.dir` (see [`crate::authoring::build`]).
pub(in crate::authoring) fn build(
    options: BuildOptions,
    mut progress: impl FnMut(&BuildStep),
) -> Result<BuiltPlugin, AuthoringError> {
    let dir = &options.dir;
    let project = read_project(dir)?;
    let requirements = Requirements::read(dir)?;
    let version = componentize_py_version();
    let python = venv_python(&venv_dir(version), version)?;
    let stage = Stage::new()?;
    let src = stage.0.join("src");
    let wit = stage.0.join("wit");
    stage.create_dir(&src)?;
    stage.create_dir(&wit)?;
    for module in python_files(dir)? {
        let name = module.file_name().expect("a file").to_string_lossy().into_owned();
        if GLUE_MODULES.contains(&name.as_str()) {
            let reason = "has the name of a module `assay plugin build` writes: rename it".to_owned();
            return Err(manifest_error(dir, ManifestErrorKind::BadMetric { file: name, reason }));
        }
        let copy = src.join(&name);
        std::fs::copy(&module, &copy).map_err(|cause| AuthoringError::Write { path: copy, cause })?;
    }
    let mut path = vec![src.clone()];
    let mut bundled = Vec::new();
    if let Some(requirements) = &requirements {
        let site = stage.0.join("packages");
        packages::bundle(dir, &python, requirements, &cache_dir().join("python-packages"), &site, &mut progress)?;
        bundled = packages::top_level(&site)?;
        if let Some(package) = bundled.iter().find(|name| dir.join(format!("{name}.py")).is_file()) {
            let kind = RequirementsErrorKind::HiddenPackage { package: package.clone() };
            return Err(AuthoringError::Requirements { path: requirements.path.clone(), kind });
        }
        path.push(site);
    }
    let config = format!(
        "\"\"\"Written by `assay plugin build`: what the glue `assay_app` serves.\"\"\"\n\nNAME = {}\nVERSION = {}\nMETRICS = {}\nPACKAGES = {}\n",
        serde_json::to_string(&project.name).expect("a string"),
        serde_json::to_string(&project.version).expect("a string"),
        serde_json::to_string(&project.keys).expect("strings"),
        serde_json::to_string(&bundled).expect("strings"),
    );
    stage.write(&src.join("assay_plugin.py"), &config)?;
    stage.write(&src.join("assay_app.py"), GLUE)?;
    stage.write(&wit.join("plugin.wit"), WIT)?;
    stage.write(&stage.0.join("componentize.py"), COMPONENTIZE)?;
    let out = stage.0.join("component.wasm");

    progress(&BuildStep::Componentizing { name: project.name.clone(), version: version.to_owned() });
    let status = Command::new(&python)
        .current_dir(&stage.0)
        .arg("componentize.py")
        .arg(&wit)
        .arg(WORLD)
        .arg(&out)
        .args(&path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(options.cargo_stdout)
        .stderr(options.cargo_stderr)
        .status()
        .map_err(|cause| AuthoringError::Componentizer { python: python.clone(), cause })?;
    if !status.success() {
        return Err(AuthoringError::PythonBuildFailed { name: project.name });
    }
    let bytes = std::fs::read(&out)
        .map_err(|cause| AuthoringError::ReadModule { path: out.clone(), cause: cause.to_string() })?;
    let output = dir.join(&project.component);
    std::fs::write(&output, &bytes).map_err(|cause| AuthoringError::Write { path: output.clone(), cause })?;
    load_built(output, &bytes)
}

/// A `pyproject.toml` error.
fn manifest_error(dir: &Path, kind: ManifestErrorKind) -> AuthoringError {
    AuthoringError::Manifest { path: dir.join("pyproject.toml"), kind }
}

/// Reads and checks `DIR/pyproject.toml`.
fn read_project(dir: &Path) -> Result<PythonProject, AuthoringError> {
    let fail = |kind| manifest_error(dir, kind);
    let path = dir.join("pyproject.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| fail(ManifestErrorKind::Read(e)))?;
    let value: toml::Table = toml::from_str(&text).map_err(|e| fail(ManifestErrorKind::Syntax(e.to_string())))?;
    let project = value.get("project");
    let field = |name: &str| project.and_then(|p| p.get(name)).and_then(toml::Value::as_str);
    let name = field("name").ok_or_else(|| fail(ManifestErrorKind::NoProjectName))?.to_owned();
    let version = field("version").unwrap_or("0.1.0").to_owned();
    let assay = value.get("tool").and_then(|t| t.get("assay"));
    let listed: Vec<&str> = assay
        .and_then(|a| a.get("metrics"))
        .and_then(toml::Value::as_array)
        .map(|files| files.iter().filter_map(toml::Value::as_str).collect())
        .unwrap_or_default();
    if listed.is_empty() {
        return Err(fail(ManifestErrorKind::NoMetrics));
    }
    let mut keys: Vec<String> = Vec::new();
    for file in listed {
        let key = metric_key(dir, file, &keys)
            .map_err(|reason| fail(ManifestErrorKind::BadMetric { file: file.to_owned(), reason }))?;
        keys.push(key);
    }
    let component = assay
        .and_then(|a| a.get("component"))
        .and_then(toml::Value::as_str)
        .map_or_else(|| format!("{name}.wasm"), str::to_owned);
    if let Some(why) = component_outside(&component) {
        return Err(fail(ManifestErrorKind::ComponentOutside(why)));
    }
    Ok(PythonProject { name, version, keys, component })
}

/// The key of the metric file `file` listed in `dir`'s `pyproject.toml`
/// (its name without `.py`), or why it cannot be one.
fn metric_key(dir: &Path, file: &str, keys_so_far: &[String]) -> Result<String, String> {
    let Some(stem) = file.strip_suffix(".py") else {
        return Err("is not a `.py` file".to_owned());
    };
    if file.contains(['/', '\\']) {
        return Err("is not a file of this folder: list metric files that sit next to pyproject.toml".to_owned());
    }
    let valid = stem.starts_with(|c: char| c.is_ascii_lowercase())
        && stem.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !stem.starts_with("not_");
    if !valid {
        return Err("cannot name a key (its name without `.py`): use lowercase letters, digits and `_`, starting with a letter (and not `not_`)".to_owned());
    }
    if GLUE_MODULES.contains(&file) {
        return Err("has the name of a module `assay plugin build` writes: rename it".to_owned());
    }
    if keys_so_far.iter().any(|key| key == stem) {
        return Err("is listed twice".to_owned());
    }
    if !dir.join(file).is_file() {
        return Err(format!("does not exist in `{}`", dir.display()));
    }
    Ok(stem.to_owned())
}

/// The `.py` files of `dir` (not of its subfolders), sorted.
fn python_files(dir: &Path) -> Result<Vec<PathBuf>, AuthoringError> {
    let fail = |cause: std::io::Error| manifest_error(dir, ManifestErrorKind::Read(cause));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(fail)? {
        let path = entry.map_err(fail)?.path();
        if path.extension().is_some_and(|e| e == "py") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The virtual environment with componentize-py `version`:
/// `COMPONENTIZE_PY_VENV`, else `componentize-py-VERSION` in assay's cache
/// folder, where `plugins/readability-py/build.sh` installs it too.
fn venv_dir(version: &str) -> PathBuf {
    if let Some(venv) = std::env::var_os("COMPONENTIZE_PY_VENV").filter(|v| !v.is_empty()) {
        return PathBuf::from(venv);
    }
    cache_dir().join(format!("componentize-py-{version}"))
}

/// Assay's cache folder: `$XDG_CACHE_HOME/assay`, else `~/.cache/assay`.
fn cache_dir() -> PathBuf {
    let cache = CompileCache::default_dir().and_then(|components| components.parent().map(Path::to_owned));
    cache.unwrap_or_else(|| PathBuf::from(".cache/assay"))
}

/// The Python of `venv`, if componentize-py `version` is installed there.
fn venv_python(venv: &Path, version: &str) -> Result<PathBuf, AuthoringError> {
    let python = if cfg!(windows) { venv.join("Scripts/python.exe") } else { venv.join("bin/python") };
    let missing =
        |found: String| AuthoringError::NoComponentizePy { venv: venv.to_owned(), version: version.to_owned(), found };
    if !python.exists() {
        return Err(missing("there is no Python there".to_owned()));
    }
    let asked = Command::new(&python)
        .args(["-c", "import importlib.metadata as m; print(m.version('componentize-py'))"])
        .output()
        .map_err(|cause| AuthoringError::Componentizer { python: python.clone(), cause })?;
    let installed = String::from_utf8_lossy(&asked.stdout).trim().to_owned();
    if !asked.status.success() {
        return Err(missing("componentize-py is not installed there".to_owned()));
    }
    if installed != version {
        return Err(missing(format!("it has componentize-py {installed}")));
    }
    Ok(python)
}

/// A temporary folder the build is staged in, removed when dropped.
struct Stage(PathBuf);

impl Stage {
    fn new() -> Result<Stage, AuthoringError> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!("assay-python-build-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&path).map_err(|cause| AuthoringError::CreateDir { path: path.clone(), cause })?;
        Ok(Stage(path))
    }

    fn create_dir(&self, path: &Path) -> Result<(), AuthoringError> {
        std::fs::create_dir(path).map_err(|cause| AuthoringError::CreateDir { path: path.to_owned(), cause })
    }

    fn write(&self, path: &Path, text: &str) -> Result<(), AuthoringError> {
        std::fs::write(path, text).map_err(|cause| AuthoringError::Write { path: path.to_owned(), cause })
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        // A leftover in the temporary folder costs nothing worth an error.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(text: &str, files: &[&str]) -> (tempfile::TempDir, Result<PythonProject, AuthoringError>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pyproject.toml"), text).unwrap();
        for file in files {
            std::fs::write(dir.path().join(file), "def evaluate(output, expected):\n    return True\n").unwrap();
        }
        let read = read_project(dir.path());
        (dir, read)
    }

    #[test]
    fn a_pyproject_names_the_plugin_its_keys_and_its_component() {
        let text = "[project]\nname = \"seed\"\n[tool.assay]\nmetrics = [\"a_b.py\", \"c.py\"]\n";
        let (_dir, read) = project(text, &["a_b.py", "c.py"]);
        let expected = PythonProject {
            name: "seed".into(),
            version: "0.1.0".into(),
            keys: vec!["a_b".into(), "c".into()],
            component: "seed.wasm".into(),
        };
        assert_eq!(read.unwrap(), expected);
        let text = "[project]\nname = \"s\"\nversion = \"2.0.0\"\n[tool.assay]\nmetrics = [\"m.py\"]\ncomponent = \"out.wasm\"\n";
        let read = project(text, &["m.py"]).1.unwrap();
        assert_eq!((read.version.as_str(), read.component.as_str()), ("2.0.0", "out.wasm"));
    }

    #[test]
    fn a_component_path_leaving_the_folder_is_refused() {
        let text = "[project]\nname = \"s\"\n[tool.assay]\nmetrics = [\"m.py\"]\ncomponent = \"../../x.wasm\"\n";
        let error = project(text, &["m.py"]).1.unwrap_err();
        assert!(error.to_string().contains("leaves the plugin's folder"), "{error}");
    }

    #[test]
    fn a_pyproject_without_a_name_or_metrics_is_refused_saying_what_to_write() {
        let (dir, read) = project("[tool.assay]\nmetrics = [\"m.py\"]\n", &["m.py"]);
        let error = read.unwrap_err();
        assert!(error.is_usage());
        let path = dir.path().join("pyproject.toml");
        assert!(error.to_string().starts_with(&format!("`{}`: it has no [project] name", path.display())), "{error}");
        for text in ["[project]\nname = \"s\"\n", "[project]\nname = \"s\"\n[tool.assay]\nmetrics = []\n"] {
            let error = project(text, &[]).1.unwrap_err();
            assert!(error.to_string().contains("it lists no metric files\n\nConsider `metrics = [\"KEY.py\"]`"));
        }
        assert!(matches!(
            project("[project\n", &[]).1,
            Err(AuthoringError::Manifest { kind: ManifestErrorKind::Syntax(_), .. })
        ));
    }

    #[test]
    fn a_metric_file_that_cannot_be_a_key_is_refused_saying_why() {
        let cases = [
            ("m.txt", "is not a `.py` file"),
            ("sub/m.py", "is not a file of this folder"),
            ("Upper.py", "cannot name a key"),
            ("not_m.py", "cannot name a key"),
            ("assay_app.py", "has the name of a module `assay plugin build` writes"),
            ("gone.py", "does not exist in"),
        ];
        for (file, reason) in cases {
            let text = format!("[project]\nname = \"s\"\n[tool.assay]\nmetrics = [{file:?}]\n");
            let error = project(&text, &["Upper.py", "not_m.py", "assay_app.py"]).1.unwrap_err();
            let message = error.to_string();
            assert!(message.contains(&format!(": its metric `{file}` {reason}")), "{file}: {message}");
        }
        let text = "[project]\nname = \"s\"\n[tool.assay]\nmetrics = [\"m.py\", \"m.py\"]\n";
        assert!(project(text, &["m.py"]).1.unwrap_err().to_string().ends_with("its metric `m.py` is listed twice"));
    }

    #[test]
    fn a_venv_without_the_pinned_componentize_py_says_how_to_install_it() {
        let venv = tempfile::tempdir().unwrap();
        let error = venv_python(venv.path(), "0.25.1").unwrap_err();
        assert!(error.is_usage());
        let shown = venv.path().display();
        assert_eq!(
            error.to_string(),
            format!(
                "failed to find componentize-py 0.25.1 in `{shown}` (there is no Python there)\n\nConsider installing it there (from PyPI, with Python 3.10 or later):\n  python3 -m venv {shown} && {shown}/bin/pip install componentize-py==0.25.1\nor pointing COMPONENTIZE_PY_VENV at a virtual environment that has it"
            )
        );
    }

    #[test]
    fn a_folder_with_a_pyproject_and_no_cargo_manifest_is_a_python_plugin() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_python_plugin(dir.path()));
        std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
        assert!(is_python_plugin(dir.path()));
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert!(!is_python_plugin(dir.path()));
    }
}
