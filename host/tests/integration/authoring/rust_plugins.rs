//! Writing a plugin: `assay plugin new` scaffolds a crate whose unit test
//! passes natively, `assay plugin build` makes a component of it, and the
//! result loads into assay and answers checks.

use crate::util::{assay, root, stderr, stdout};
use std::path::Path;
use std::process::{Command, Output};

/// Runs the `assay` binary in `dir`.
fn assay_in(dir: &Path, args: &[&str]) -> Output {
    crate::util::assay_command().args(args).current_dir(dir).output().unwrap()
}

#[test]
fn a_scaffolded_plugin_tests_builds_and_loads_following_the_printed_steps() {
    let dir = tempfile::tempdir().unwrap();
    // No SDK anywhere but in the binary: the scaffold vendors it.
    let output = assay_in(dir.path(), &["plugin", "new", "mentions-all"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let printed = stdout(&output);
    assert!(printed.contains("with the key `mentions_all`"), "{printed}");
    let steps: Vec<&str> = printed
        .lines()
        .skip_while(|line| *line != "Next:")
        .skip(1)
        .map(|line| line.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(steps, ["cd mentions-all", "cargo test", "assay plugin build"], "{printed}");
    let crate_dir = dir.path().join(steps[0].strip_prefix("cd ").unwrap());
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("assay-plugin-sdk = { path = \"vendor/assay-plugin-sdk\" }"), "{manifest}");
    // One target directory for every run, so that reruns are incremental.
    let target = root().join("target/scaffold-test");

    // `cargo test`: the scaffold's own unit tests, natively.
    let tested = Command::new(env!("CARGO"))
        .args(["test", "--quiet"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", target.join("native"))
        .output()
        .unwrap();
    assert!(tested.status.success(), "{}{}", stdout(&tested), stderr(&tested));
    assert!(stdout(&tested).contains("2 passed"), "{}", stdout(&tested));

    // `assay plugin build`, in the crate, into its own `target` (a link to
    // the shared one, to stay incremental).
    std::fs::create_dir_all(target.join("wasm")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(target.join("wasm"), crate_dir.join("target")).unwrap();
    let built = crate::util::assay_command()
        .args(["plugin", "build"])
        .current_dir(&crate_dir)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert_eq!(built.status.code(), Some(0), "{}{}", stdout(&built), stderr(&built));
    let component = crate_dir.join("mentions-all.wasm");
    let printed = stdout(&built);
    let lines: Vec<&str> = printed.lines().collect();
    assert!(lines[0].ends_with("mentions-all.wasm"), "{printed}");
    let sha256 = assay::sandbox::sha256_hex(&std::fs::read(&component).unwrap());
    assert_eq!(lines[1], format!("sha256 {sha256}"));
    assert_eq!(lines[2], "mentions-all 0.1.0 provides: mentions_all");
    // It says how to load it: the snippet is valid assay.toml that loads it.
    let absolute = std::fs::canonicalize(&component).unwrap();
    assert_eq!(lines[3], format!("Load it with `--plugin {}`, or in assay.toml:", absolute.display()));
    let snippet: String = lines[4..].iter().map(|line| format!("{}\n", line.trim())).collect();
    std::fs::write(dir.path().join("assay.toml"), &snippet).unwrap();
    let listed = assay_in(dir.path(), &["plugins"]);
    assert!(stdout(&listed).contains("mentions_all"), "{snippet}\n{}{}", stdout(&listed), stderr(&listed));
    // A new plugin is built against the current contract, assay:plugin@0.3.0.
    let engine = wasmtime::Engine::default();
    let built = wasmtime::component::Component::from_file(&engine, &component).unwrap();
    let exports: Vec<String> = built.component_type().exports(&engine).map(|(name, _)| name.to_owned()).collect();
    assert_eq!(exports, ["assay:plugin/matcher@0.3.0"]);

    let check = |key: &str, expected: &str| {
        assay(&[
            "check",
            "--plugin",
            component.to_str().unwrap(),
            "--key",
            key,
            "--actual",
            "\"The Beatles came from Liverpool\"",
            "--expected",
            expected,
        ])
    };
    let output = check("mentions_all", "\"liverpool BEATLES\"");
    assert_eq!(stdout(&output), "PASS mentions_all: the text mentions every word of \"liverpool BEATLES\"\n");
    let output = check("not_mentions_all", "\"beatles london\"");
    assert_eq!(stdout(&output), "PASS not_mentions_all: the text does not mention london\n");
}

#[test]
fn plugin_new_refuses_bad_names_and_occupied_folders() {
    let output = assay(&["plugin", "new", "Not-Lower"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("`Not-Lower` cannot name a plugin"), "{}", stderr(&output));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let output = assay(&["plugin", "new", "fine", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("already exists and is not empty"), "{}", stderr(&output));
}

#[test]
fn plugin_build_outside_a_crate_says_what_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let output = assay(&["plugin", "build", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("Cargo.toml"), "{}", stderr(&output));
    assert!(stderr(&output).contains("Consider the folder of a plugin crate"), "{}", stderr(&output));
}

#[test]
fn the_scaffold_vendors_the_sdk_or_depends_on_the_release_or_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let output = assay_in(dir.path(), &["plugin", "new", "fresh", "--sdk", "registry"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let manifest = std::fs::read_to_string(dir.path().join("fresh/Cargo.toml")).unwrap();
    let version = env!("CARGO_PKG_VERSION").rsplit_once('.').unwrap().0;
    assert_eq!(version, "0.1");
    assert!(manifest.contains("\nassay-plugin-sdk = \"0.1\"\n"), "{manifest}");
    assert!(!manifest.contains("path =") && !dir.path().join("fresh/vendor").exists(), "{manifest}");

    // A local SDK beside the crate is named relative to it, so that a
    // teammate's checkout laid out alike builds too.
    std::fs::create_dir(dir.path().join("sdk")).unwrap();
    let output = assay_in(dir.path(), &["plugin", "new", "local", "--sdk", "sdk"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let manifest = std::fs::read_to_string(dir.path().join("local/Cargo.toml")).unwrap();
    assert!(manifest.contains("assay-plugin-sdk = { path = \"../sdk\" }"), "{manifest}");

    // The vendored SDK is the SDK of this tree, file for file.
    let output = assay_in(dir.path(), &["plugin", "new", "vendored", "--sdk", "vendored"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let vendored = dir.path().join("vendored/vendor/assay-plugin-sdk");
    for file in ["src/lib.rs", "src/matcher.rs", "README.md"] {
        let ours = std::fs::read_to_string(root().join("plugin-sdk").join(file)).unwrap();
        assert_eq!(std::fs::read_to_string(vendored.join(file)).unwrap(), ours, "{file}");
    }
    let wit = std::fs::read_to_string(root().join("wit/plugin-0.3/plugin.wit")).unwrap();
    assert_eq!(std::fs::read_to_string(vendored.join("wit/plugin-0.3/plugin.wit")).unwrap(), wit);
}
