//! A Python plugin's `requirements.txt` (issue 30): `assay plugin build`
//! bundles its pure-Python packages, so a metric importing one scores in
//! the sandbox exactly as it does run natively with the same package files
//! (the PyPI package `rouge` from the network, and a wheel made here from
//! `fixtures/python-packages/tinyscore` with no network), a rebuild takes
//! them from the cache, and a package that is not pure Python is refused by
//! name before anything is built.
//!
//! These tests build components, so they need componentize-py 0.25.1 in a
//! virtual environment (`.ci/run` installs it); without it they fail saying
//! so. Each builds once (13 to 22 s on 2 cores) and checks every input
//! through one `assay run`.

use crate::hostile::hostile_support::Project;
use crate::util::{assay_command, fixture, stderr, stdout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The virtual environment with componentize-py, as `assay plugin build`
/// finds it outside the tests (they give each build a cache of its own).
fn venv() -> PathBuf {
    let venv =
        std::env::var_os("COMPONENTIZE_PY_VENV").filter(|v| !v.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache"));
            cache.join("assay/componentize-py-0.25.1")
        });
    assert!(
        venv.join("bin/python").exists(),
        "these tests build Python plugins with componentize-py 0.25.1, which is not installed in {}: \
         `python3 -m venv {0} && {0}/bin/pip install componentize-py==0.25.1` (as .ci/run does), \
         or point COMPONENTIZE_PY_VENV at a virtual environment that has it",
        venv.display()
    );
    venv
}

/// A copy of the fixture plugin `name` in a temporary folder (the build
/// writes its component next to its sources).
fn plugin_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(fixture(&format!("plugins/{name}"))).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && path.extension().is_none_or(|e| e != "wasm") {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    (temp, dir)
}

/// A wheel of `fixtures/python-packages/PACKAGE` tagged `tag`, in `out`.
fn make_wheel(package: &str, out: &Path, tag: &str) -> PathBuf {
    std::fs::create_dir_all(out).unwrap();
    let script = fixture("python-packages/make_wheel.py");
    let source = fixture(&format!("python-packages/{package}"));
    let made = Command::new(venv().join("bin/python"))
        .arg(script)
        .args([source.as_os_str(), out.as_os_str()])
        .args(["1.0", tag])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    PathBuf::from(stdout(&made).trim())
}

/// `assay plugin build DIR` with `cache` as assay's cache folder and `env`.
fn build(dir: &Path, cache: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = assay_command();
    command.args(["plugin", "build"]).arg(dir).env("XDG_CACHE_HOME", cache).env("COMPONENTIZE_PY_VENV", venv());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// The one folder of installed packages in `cache`.
fn cached_site(cache: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.join("assay/python-packages"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].join("site")
}

/// What `metric` prints run natively, as the seed's runner calls it, by the
/// virtual environment's CPython with the packages of `site`.
fn native(dir: &Path, metric: &str, site: &Path, output: &str, expected: &str) -> Value {
    let printed = Command::new(venv().join("bin/python"))
        .args([metric, output, &json!({ "expected": expected }).to_string()])
        .current_dir(dir)
        .env("PYTHONPATH", site)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(printed.status.success(), "{}", stderr(&printed));
    serde_json::from_str(&stdout(&printed)).unwrap()
}

/// The score and extras of `key` for each (output, expected) pair, from one
/// `assay run` of the component (the echo agent answers each output), with
/// the compile cache of `cache`, the assay cache folder of its build (which
/// compiled it there: the run does not compile it again).
fn in_assay(component: &Path, cache: &Path, key: &str, pairs: &[(&str, &str)]) -> Vec<Value> {
    let project = Project::new(&format!("[plugins.bundled]\npath = {:?}\n", component.to_str().unwrap()));
    for (index, (output, expected)) in pairs.iter().enumerate() {
        let check = format!(r#""{key}": {{ "expected": {}, "threshold": 0 }}"#, json!(expected));
        project.simple_case(&format!("c{index}"), "echo", output, &check, None);
    }
    let components = cache.join("assay/components");
    let run = project.run(&["--cache-dir", components.to_str().unwrap()]);
    assert_eq!(run.finished.code, Some(0), "{}", run.describe());
    let compiled = run.finished.stderr.contains("for its first use on this machine");
    assert!(!compiled, "the build compiled it into the cache: {}", run.describe());
    (0..pairs.len())
        .map(|index| {
            let case = run.results.iter().find(|r| r["id"] == format!("c{index}")).unwrap();
            let check = &case["samples"][0]["runs"][0]["interactions"][0]["checks"][0];
            let mut scored = check["extras"].clone();
            scored["score"] = check["score"].clone();
            scored
        })
        .collect()
}

#[test]
fn a_metric_importing_a_pypi_package_scores_as_it_does_natively() {
    let (_temp, dir) = plugin_copy("rouge-py");
    let cache = tempfile::tempdir().unwrap();
    let built = build(&dir, cache.path(), &[]);
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
    let said = stderr(&built);
    assert!(
        said.contains(&format!(
            "installing the packages of {} with pip (pure-Python wheels only)",
            dir.join("requirements.txt").display()
        )),
        "{said}"
    );
    let site = cached_site(cache.path());
    let mut installed: Vec<String> =
        std::fs::read_dir(&site).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    installed.sort();
    assert_eq!(installed, ["bin", "rouge", "rouge-1.0.1.dist-info", "six-1.17.0.dist-info", "six.py"]);

    let pairs = [
        ("the cat sat on the mat", "a cat sat on a mat today"),
        ("Indices: logs-2026.11, metrics (3 shards each); all green.", "all 2 indices are green, with 3 shards each"),
        ("completely unrelated words here", "the cluster health is yellow"),
        ("the the the cat", "the cat the cat"),
    ];
    let sandboxed = in_assay(&dir.join("rouge-py.wasm"), cache.path(), "rouge_scores", &pairs);
    for ((output, expected), sandboxed) in pairs.iter().zip(&sandboxed) {
        // Bit for bit: the same Python code on IEEE doubles, every float
        // printed and read back as the shortest round-tripping decimal.
        assert_eq!(sandboxed, &native(&dir, "rouge_scores.py", &site, output, expected), "{output:?}");
    }
    assert_eq!(sandboxed[0]["score"], json!(0.6060606011019284), "{}", sandboxed[0]);
    assert_eq!(sandboxed[2]["score"], json!(0.0), "{}", sandboxed[2]);

    // A rebuild takes the packages from the cache: with no index to fetch
    // from, pip would fail.
    let rebuilt = build(&dir, cache.path(), &[("PIP_NO_INDEX", "1")]);
    assert_eq!(rebuilt.status.code(), Some(0), "{}", stderr(&rebuilt));
    let said = stderr(&rebuilt);
    assert!(!said.contains("installing the packages"), "{said}");
    assert!(said.contains(&format!("installed before, in {}", site.display())), "{said}");
}

#[test]
fn a_local_wheel_is_bundled_without_network_and_its_lazily_imported_modules_too() {
    let (_temp, dir) = plugin_copy("overlap-py");
    make_wheel("tinyscore", &dir.join("wheels"), "py3-none-any");
    let cache = tempfile::tempdir().unwrap();
    // No index at all: the wheel comes from the plugin's folder.
    let built = build(&dir, cache.path(), &[("PIP_NO_INDEX", "1")]);
    assert_eq!(built.status.code(), Some(0), "{}", stderr(&built));
    assert!(stdout(&built).contains("overlap-py 0.1.0 provides: overlap"), "{}", stdout(&built));
    let site = cached_site(cache.path());

    let pairs = [
        ("The cat sat on the mat, wonderfully", "a cat sat on a mat"),
        ("one", "one two three"),
        ("nothing shared", "at all"),
    ];
    let sandboxed = in_assay(&dir.join("overlap-py.wasm"), cache.path(), "overlap", &pairs);
    for ((output, expected), sandboxed) in pairs.iter().zip(&sandboxed) {
        assert_eq!(sandboxed, &native(&dir, "overlap.py", &site, output, expected), "{output:?}");
    }
    // `tinyscore.weights`, which the metric imports only when called, is
    // in the component: the build imported it.
    assert_eq!(sandboxed[1], json!({"score": 0.5, "longest_weight": 3f64.sqrt() / 3.0}));
}

#[test]
fn a_package_that_is_not_pure_python_is_refused_by_name_before_anything_is_built() {
    let (_temp, dir) = plugin_copy("overlap-py");
    let wheels = dir.join("wheels");
    let native_wheel = make_wheel("fastscore", &wheels.join("native"), "platform");
    let tag =
        native_wheel.file_name().unwrap().to_string_lossy().trim_start_matches("fastscore-1.0-").replace(".whl", "");
    let pure_tagged = make_wheel("fastscore", &wheels.join("pure"), "py3-none-any");
    let requirements = dir.join("requirements.txt");
    let cache = tempfile::tempdir().unwrap();
    let refused = |wheel: &Path| {
        let relative = wheel.strip_prefix(&dir).unwrap().to_str().unwrap().to_owned();
        std::fs::write(&requirements, format!("{relative}\n")).unwrap();
        let built = build(&dir, cache.path(), &[("PIP_NO_INDEX", "1")]);
        assert_eq!(built.status.code(), Some(2), "{}", stderr(&built));
        assert!(!stderr(&built).contains("componentize-py"), "{}", stderr(&built));
        stderr(&built)
    };
    let consider = "\n\nConsider a pure-Python package that does the same, or the part of it the metric needs as a `.py` file of the plugin\n";
    let head = format!(
        "error: `{}`: it installs packages that are not pure Python, which a component cannot hold:\n",
        requirements.display()
    );
    assert!(
        refused(&native_wheel).ends_with(&format!("{head}  fastscore 1.0: its wheel is built for {tag}{consider}")),
        "{}",
        refused(&native_wheel)
    );
    assert!(
        refused(&pure_tagged).ends_with(&format!(
            "{head}  fastscore 1.0: it holds the native library `fastscore/_speedups.so`{consider}"
        )),
        "{}",
        refused(&pure_tagged)
    );
    // Nothing was built, and nothing refused was cached.
    assert!(!dir.join("overlap-py.wasm").exists());
    let cached = std::fs::read_dir(cache.path().join("assay/python-packages")).unwrap().count();
    assert_eq!(cached, 0);
}

#[test]
fn a_requirements_line_choosing_where_code_comes_from_is_refused_before_pip_runs() {
    let (_temp, dir) = plugin_copy("overlap-py");
    let requirements = dir.join("requirements.txt");
    std::fs::write(&requirements, "six==1.17.0\n--extra-index-url https://pypi.example.com/simple\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let built = build(&dir, cache.path(), &[]);
    assert_eq!(built.status.code(), Some(2), "{}", stderr(&built));
    assert_eq!(
        stderr(&built),
        format!(
            "error: `{}`: line 2 `--extra-index-url https://pypi.example.com/simple` changes where pip fetches packages from, which a plugin's folder may not choose\n\nConsider setting your index in your own pip configuration (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL or pip.conf), which the build's pip reads, or saving the wheel in the plugin's folder and listing its path\n",
            requirements.display()
        )
    );
    assert!(!cache.path().join("assay/python-packages").exists());
}

#[test]
fn a_requirement_pip_cannot_install_is_an_error_naming_the_file_with_pips_words() {
    let (_temp, dir) = plugin_copy("overlap-py");
    let requirements = dir.join("requirements.txt");
    std::fs::write(&requirements, "no-such-package-for-assay==1.0\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let built = build(&dir, cache.path(), &[("PIP_NO_INDEX", "1")]);
    assert_eq!(built.status.code(), Some(1), "{}", stderr(&built));
    let said = stderr(&built);
    let head = format!(
        "error: `{}`: pip could not install it (pure-Python wheels only, for Python 3.14):\n",
        requirements.display()
    );
    assert!(said.contains(&head), "{said}");
    assert!(said.contains("  ERROR: No matching distribution found for no-such-package-for-assay==1.0"), "{said}");
    assert!(said.contains("a package published only as source (no wheel) cannot be bundled"), "{said}");
}

#[test]
fn a_module_of_the_plugin_named_like_a_package_it_installs_is_refused() {
    let (_temp, dir) = plugin_copy("overlap-py");
    make_wheel("tinyscore", &dir.join("wheels"), "py3-none-any");
    std::fs::write(dir.join("tinyscore.py"), "WORDS = 1\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let built = build(&dir, cache.path(), &[("PIP_NO_INDEX", "1")]);
    assert_eq!(built.status.code(), Some(2), "{}", stderr(&built));
    assert!(
        stderr(&built).ends_with(&format!(
            "error: `{}`: it installs the package `tinyscore`, which the plugin's `tinyscore.py` would hide from every metric\n\nConsider renaming `tinyscore.py`\n",
            dir.join("requirements.txt").display()
        )),
        "{}",
        stderr(&built)
    );
}
