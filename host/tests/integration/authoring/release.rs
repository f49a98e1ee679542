//! The release workflow of `docs/ci/`, as far as this machine can run it:
//! `release.yml` parses and builds every platform `install.sh` offers (and
//! no other); `package.sh` packs the assay under test with README.md and
//! every first-party plugin, with a sha256 that matches; `install.sh`,
//! pointed at those archives served over HTTP on 127.0.0.1, installs a
//! binary that runs, and refuses (installing nothing) an archive whose
//! sha256 does not match or a platform with no build. What it cannot check
//! here: GitHub's runners and the `actions/*` and `gh release` steps.

use crate::util::root;
use assay::plugin::FIRST_PARTY_PLUGINS;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const TARGET: &str = "x86_64-unknown-linux-gnu";

fn workflow() -> Value {
    let text = std::fs::read_to_string(root().join("docs/ci/release.yml")).unwrap();
    Value::deserialize(yaml_serde::Deserializer::from_str(&text)).unwrap()
}

/// The targets `install.sh` knows a build for.
fn installable_targets() -> Vec<String> {
    let script = std::fs::read_to_string(root().join("docs/ci/install.sh")).unwrap();
    let line = script.lines().find(|l| l.starts_with("supported=")).unwrap();
    line.trim_start_matches("supported=").trim_matches('"').split_whitespace().map(str::to_owned).collect()
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Packs the `assay` under test as `TARGET` into `out` with package.sh.
fn package(out: &Path) -> PathBuf {
    let output = Command::new(root().join("docs/ci/package.sh"))
        .args([env!("CARGO_BIN_EXE_assay"), TARGET])
        .arg(out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    out.join(format!("assay-{TARGET}.tar.gz"))
}

/// The `assay` under test packed once for all the tests (which copy what
/// they change), in a folder of the target directory that each test run
/// empties first: a temporary directory held by a static is never
/// removed, and left 68 MB behind in /tmp at every run.
fn packed() -> &'static Path {
    static PACKED: OnceLock<PathBuf> = OnceLock::new();
    PACKED.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("release-packed");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        package(&dir)
    })
}

/// Serves the files of `dir` over HTTP on 127.0.0.1 (GET only, one request
/// per connection) until the process ends; returns the base URL.
fn serve(dir: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request_line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/');
            let file = (!path.contains("..")).then(|| std::fs::read(dir.join(path)).ok()).flatten();
            let response = match file {
                Some(body) => {
                    [format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len()).into_bytes(), body].concat()
                }
                None => b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_vec(),
            };
            let _ = stream.write_all(&response);
        }
    });
    url
}

/// Runs install.sh against `url`, installing under `home`.
fn install(url: &str, home: &Path, target: &str) -> Output {
    Command::new("sh")
        .arg(root().join("docs/ci/install.sh"))
        .env("ASSAY_DOWNLOAD_URL", url)
        .env("ASSAY_TARGET", target)
        .env("ASSAY_INSTALL_DIR", home.join("bin"))
        .env("ASSAY_PLUGINS_DIR", home.join("plugins"))
        .env("HOME", home)
        .output()
        .unwrap()
}

#[test]
fn the_release_workflow_builds_every_platform_the_installer_offers_and_packs_them_with_package_sh() {
    let workflow = workflow();
    assert_eq!(workflow["on"]["push"]["tags"][0], "v[0-9]+.[0-9]+.[0-9]+*");
    let build = &workflow["jobs"]["build"];
    let publish = &workflow["jobs"]["publish"];
    assert_eq!(publish["needs"], "build");
    assert_eq!(build["strategy"]["fail-fast"], true);
    let mut built: Vec<String> = build["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            assert!(entry["runner"].is_string(), "{entry} has no runner");
            entry["target"].as_str().unwrap().to_owned()
        })
        .collect();
    built.sort();
    let mut offered = installable_targets();
    offered.sort();
    assert_eq!(built, offered, "release.yml builds what install.sh offers");

    let steps = |job: &Value| job["steps"].as_array().unwrap().clone();
    let runs = |job: &Value| steps(job).iter().filter_map(|s| s["run"].as_str().map(str::to_owned)).collect::<Vec<_>>();
    let build_run = runs(build).into_iter().find(|r| r.starts_with("cargo build")).unwrap();
    for flag in ["--release", "--locked", "-p assay", "--bin assay", "--target ${{ matrix.target }}"] {
        assert!(build_run.contains(flag), "the build step lacks {flag}: {build_run}");
    }
    let upload = steps(build).into_iter().find(|s| s["uses"].as_str().is_some_and(|u| u.contains("upload-artifact")));
    assert_eq!(upload.unwrap()["with"]["path"], "target/${{ matrix.target }}/release/assay");
    let pack = runs(publish).into_iter().find(|r| r.contains("package.sh")).unwrap();
    assert!(pack.contains("docs/ci/package.sh \"$dir/assay\" \"${dir#bins/bin-}\" dist"), "{pack}");
    assert!(pack.contains("cp docs/ci/install.sh dist/"), "{pack}");
    assert!(runs(publish).iter().any(|r| r.contains("gh release create")));
}

#[test]
fn package_sh_packs_the_binary_readme_and_every_first_party_plugin_with_a_matching_sha256() {
    let archive = packed();
    let bytes = std::fs::read(archive).unwrap();
    let sums = std::fs::read_to_string(archive.with_extension("gz.sha256")).unwrap();
    assert_eq!(sums, format!("{:x}  assay-{TARGET}.tar.gz\n", Sha256::digest(&bytes)));

    let listing = Command::new("tar").arg("-tvzf").arg(archive).output().unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    let entry =
        |path: &str| listing.lines().find(|l| l.ends_with(&format!(" assay-{TARGET}/{path}"))).map(str::to_owned);
    let binary = entry("assay").unwrap_or_else(|| panic!("no binary in\n{listing}"));
    assert!(binary.starts_with("-rwxr-xr-x 0/0"), "{binary}");
    assert!(entry("README.md").is_some(), "{listing}");
    for plugin in FIRST_PARTY_PLUGINS {
        assert!(entry(plugin.path).is_some(), "{} is missing from\n{listing}", plugin.path);
    }

    // Packing again gives the same bytes (sorted names, fixed times).
    let again = tempfile::tempdir().unwrap();
    assert!(std::fs::read(package(again.path())).unwrap() == bytes, "package.sh is not reproducible");

    let bad = Command::new(root().join("docs/ci/package.sh"))
        .args([env!("CARGO_BIN_EXE_assay"), "x86_64; rm -rf ~"])
        .arg(again.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("is not a target triple"), "{}", text(&bad));
}

#[test]
fn install_sh_installs_a_served_release_and_refuses_a_tampered_one_or_an_unknown_platform() {
    let dist = tempfile::tempdir().unwrap();
    let archive = dist.path().join(packed().file_name().unwrap());
    std::fs::copy(packed(), &archive).unwrap();
    let sums = packed().with_extension("gz.sha256");
    std::fs::copy(&sums, dist.path().join(sums.file_name().unwrap())).unwrap();
    let url = serve(dist.path().to_path_buf());

    let home = tempfile::tempdir().unwrap();
    let output = install(&url, home.path(), TARGET);
    assert!(output.status.success(), "{}", text(&output));
    let installed = home.path().join("bin/assay");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    let ours = Command::new(env!("CARGO_BIN_EXE_assay")).arg("--version").output().unwrap();
    assert!(version.status.success());
    assert_eq!(version.stdout, ours.stdout);
    assert!(text(&output).contains(&format!("installed {}", String::from_utf8_lossy(&ours.stdout).trim())));
    for plugin in FIRST_PARTY_PLUGINS {
        let relative = plugin.path.strip_prefix("plugins/").unwrap();
        let got = std::fs::read(home.path().join("plugins").join(relative)).unwrap();
        assert!(got == std::fs::read(root().join(plugin.path)).unwrap(), "{relative} differs");
    }
    assert!(text(&output).contains("add "), "a bin dir off the PATH is pointed out: {}", text(&output));

    // One byte changed after the sha256 was published: nothing installed.
    let mut bytes = std::fs::read(&archive).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&archive, bytes).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let refused = install(&url, elsewhere.path(), TARGET);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(text(&refused).contains("does not match its published sha256"), "{}", text(&refused));
    assert!(!elsewhere.path().join("bin").exists(), "something was installed");

    let unknown = install(&url, elsewhere.path(), "riscv64gc-unknown-linux-gnu");
    assert_eq!(unknown.status.code(), Some(1));
    let message = text(&unknown);
    assert!(message.contains("no prebuilt assay for riscv64gc-unknown-linux-gnu"), "{message}");
    assert!(message.contains("cargo install --locked"), "{message}");

    let missing = install(&format!("{url}/nowhere"), elsewhere.path(), TARGET);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing).contains(&format!("cannot download {url}/nowhere/assay-{TARGET}.tar.gz")),
        "{}",
        text(&missing)
    );
}
