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
fn a_scaffolded_plugin_tests_builds_and_loads() {
    let dir = tempfile::tempdir().unwrap();
    // crates.io has no SDK of this tree: the scaffold depends on this one.
    let sdk = root().join("plugin-sdk");
    let output = assay_in(dir.path(), &["plugin", "new", "mentions-all", "--sdk", sdk.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("with the key `mentions_all`"), "{}", stdout(&output));
    let crate_dir = dir.path().join("mentions-all");
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains(&format!("assay-plugin-sdk = {{ path = {:?} }}", sdk.to_str().unwrap())), "{manifest}");
    // One target directory for every run, so that reruns are incremental.
    let target = root().join("target/scaffold-test");

    // The scaffold's own unit tests, natively.
    let tested = Command::new(env!("CARGO"))
        .args(["test", "--quiet"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", target.join("native"))
        .output()
        .unwrap();
    assert!(tested.status.success(), "{}{}", stdout(&tested), stderr(&tested));
    assert!(stdout(&tested).contains("2 passed"), "{}", stdout(&tested));

    // Built into a component and loaded, from the parent folder exactly as
    // `assay plugin new` said, into the crate's own `target` (a link to the
    // shared one, to stay incremental).
    let suggested = stdout(&output);
    let command = suggested.lines().find_map(|l| l.trim().strip_prefix("assay plugin build ")).unwrap();
    let argument = command.split_whitespace().next().unwrap();
    assert_eq!(argument, "mentions-all", "{suggested}");
    std::fs::create_dir_all(target.join("wasm")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(target.join("wasm"), crate_dir.join("target")).unwrap();
    let built = crate::util::assay_command()
        .args(["plugin", "build", argument])
        .current_dir(dir.path())
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert_eq!(built.status.code(), Some(0), "{}{}", stdout(&built), stderr(&built));
    assert!(!crate_dir.join("mentions-all").exists(), "the build went to mentions-all/mentions-all/target");
    let component = crate_dir.join("mentions-all.wasm");
    let printed = stdout(&built);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines[0], "mentions-all/mentions-all.wasm");
    let sha256 = assay::sandbox::sha256_hex(&std::fs::read(&component).unwrap());
    assert_eq!(lines[1], format!("sha256 {sha256}"));
    assert_eq!(lines[2], "mentions-all 0.1.0 provides: mentions_all");
    // A new plugin is built against the current contract, assay:plugin@0.2.0.
    let engine = wasmtime::Engine::default();
    let built = wasmtime::component::Component::from_file(&engine, &component).unwrap();
    let exports: Vec<String> = built.component_type().exports(&engine).map(|(name, _)| name.to_owned()).collect();
    assert_eq!(exports, ["assay:plugin/matcher@0.2.0"]);

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
fn the_scaffold_depends_on_the_sdk_release_unless_given_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let output = assay_in(dir.path(), &["plugin", "new", "fresh"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let manifest = std::fs::read_to_string(dir.path().join("fresh/Cargo.toml")).unwrap();
    let version = env!("CARGO_PKG_VERSION").rsplit_once('.').unwrap().0;
    assert_eq!(version, "0.1");
    assert!(manifest.contains("\nassay-plugin-sdk = \"0.1\"\n"), "{manifest}");
    assert!(!manifest.contains("path ="), "{manifest}");

    // A relative --sdk is made absolute, so that the crate can move.
    std::fs::create_dir(dir.path().join("sdk")).unwrap();
    let output = assay_in(dir.path(), &["plugin", "new", "local", "--sdk", "sdk"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let manifest = std::fs::read_to_string(dir.path().join("local/Cargo.toml")).unwrap();
    let absolute = dir.path().join("sdk");
    assert!(
        manifest.contains(&format!("assay-plugin-sdk = {{ path = {:?} }}", absolute.to_str().unwrap())),
        "{manifest}"
    );
}
