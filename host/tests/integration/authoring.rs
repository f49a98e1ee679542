//! Writing a plugin: `assay plugin new` scaffolds a crate whose unit test
//! passes natively, `assay plugin build` makes a component of it, and the
//! result loads into assay and answers checks.

use crate::util::{assay, root, stderr, stdout};
use std::process::Command;

#[test]
fn a_scaffolded_plugin_tests_builds_and_loads() {
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = dir.path().join("mentions");
    let output = assay(&["plugin", "new", "mentions-all", "--dir", crate_dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("with the key `mentions_all`"), "{}", stdout(&output));
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

    // Built into a component and loaded.
    let built = crate::util::assay_command()
        .args(["plugin", "build", crate_dir.to_str().unwrap()])
        .env("CARGO_TARGET_DIR", target.join("wasm"))
        .output()
        .unwrap();
    assert_eq!(built.status.code(), Some(0), "{}{}", stdout(&built), stderr(&built));
    let component = crate_dir.join("mentions-all.wasm");
    let printed = stdout(&built);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines[0], component.to_str().unwrap());
    let sha256 = assay::plugin::sha256_hex(&std::fs::read(&component).unwrap());
    assert_eq!(lines[1], format!("sha256 {sha256}"));
    assert_eq!(lines[2], "mentions-all 0.1.0 provides: mentions_all");

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
