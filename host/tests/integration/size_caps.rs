//! Size caps on what assay reads from outside: component files (plugins and
//! agents, from every place they can be named) and the bodies the judge and
//! embeddings backends answer with.

use crate::util::{assay, stderr};
use std::path::Path;

/// A sparse file of 65 MiB: over the 64 MiB cap, yet no disk used.
fn sparse_component(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(path).unwrap().set_len(65 << 20).unwrap();
}

/// Asserts that `output` failed naming `file`, its size and the cap.
fn assert_refused(output: &std::process::Output, file: &str) {
    assert_ne!(output.status.code(), Some(0));
    let error = stderr(output);
    assert!(error.contains(file), "{error}");
    assert!(error.contains("it is 68157440 bytes (65.0 MiB), over the 64 MiB cap on component files"), "{error}");
    assert!(error.contains("Consider stripping its debug information"), "{error}");
}

#[test]
fn component_files_over_64_mib_are_refused_wherever_they_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.wasm");
    sparse_component(&big);
    let big = big.to_str().unwrap();
    let config = dir.path().join("assay.toml");
    let config = config.to_str().unwrap();

    // [plugins.NAME], and `assay plugins --lock` hashing it.
    std::fs::write(config, "[plugins.big]\npath = \"big.wasm\"\n").unwrap();
    assert_refused(&assay(&["plugins", "--config", config]), "big.wasm");
    assert_refused(&assay(&["plugins", "--lock", "--config", config]), "big.wasm");
    // `.assay/plugins/`.
    std::fs::write(config, "").unwrap();
    let auto = dir.path().join(".assay/plugins/auto.wasm");
    sparse_component(&auto);
    assert_refused(&assay(&["plugins", "--config", config]), "auto.wasm");
    std::fs::remove_file(&auto).unwrap();
    // `--plugin`, for `assay check`.
    let check = ["check", "--config", config, "--plugin", big, "--key", "value", "--actual", "1", "--expected", "1"];
    assert_refused(&assay(&check), "big.wasm");
    // [agents], and `--agent`.
    std::fs::write(config, "[agents]\nbig = \"big.wasm\"\n").unwrap();
    assert_refused(&assay(&["agent", "list", "--config", config]), "big.wasm");
    std::fs::write(config, "").unwrap();
    let agent = format!("big={big}");
    assert_refused(&assay(&["agent", "list", "--config", config, "--agent", &agent]), "big.wasm");
    // A component `assay agent serve` is given.
    assert_refused(&assay(&["agent", "serve", "--config", config, "--port", "0", big]), "big.wasm");
}
