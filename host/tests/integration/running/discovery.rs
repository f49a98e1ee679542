//! Case discovery through the binary: symlinked directories are followed,
//! loops of links (`up -> ..`, `self -> .`) end the walk, and every case is
//! found once, under a stable id.

use crate::util::{stderr, stdout};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

const CASE: &str =
    r#"{ "agent": "echo", "interactions": [ { "text": "x", "response": { "text": { "value": "x" } } } ] }"#;

fn case(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, CASE).unwrap();
}

/// Runs `assay run ARGS --list` in `dir`, killed after 60 s (a walk that
/// loops never ends by itself).
fn list_in(dir: &Path, args: &[&str]) -> Output {
    let mut child = crate::util::assay_command()
        .arg("run")
        .args(args)
        .arg("--list")
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("`assay run {args:?} --list` was still walking after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The ids `--list` printed: the first word of each line.
fn ids(output: &Output) -> Vec<String> {
    stdout(output).lines().filter_map(|l| l.split_whitespace().next()).map(str::to_owned).collect()
}

#[cfg(unix)]
#[test]
fn symlink_loops_end_the_walk_and_every_case_is_found_once() {
    use std::os::unix::fs::symlink;
    let root = tempfile::tempdir().unwrap();
    let d = root.path().join("d");
    case(&d.join("a.hocon"));
    case(&d.join("sub/b.hocon"));
    case(&d.join("sub/deeper/c.hocon"));
    case(&root.path().join("elsewhere/e.hocon"));
    // Two `..` links and a self link: each one a loop.
    symlink("..", d.join("sub/up")).unwrap();
    symlink("..", d.join("sub/deeper/up")).unwrap();
    symlink(".", d.join("self")).unwrap();
    // A link to a folder reachable no other way is still followed, and a
    // link to one reachable by its real path adds nothing.
    symlink("../../elsewhere", d.join("sub/outside")).unwrap();
    symlink("sub/deeper", d.join("0-shortcut")).unwrap();

    let output = list_in(root.path(), &["d"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(ids(&output), ["a", "sub/b", "sub/deeper/c", "sub/outside/e"], "{}", stdout(&output));

    // The same from inside, and by a `**` glob, which the glob crate alone
    // would follow around the loops forever.
    let output = list_in(&d, &["."]);
    assert_eq!(ids(&output), ["a", "sub/b", "sub/deeper/c", "sub/outside/e"], "{}", stdout(&output));
    let output = list_in(root.path(), &["d/**/*.hocon"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(ids(&output), ["d/a", "d/sub/b", "d/sub/deeper/c", "d/sub/outside/e"], "{}", stdout(&output));
    let output = list_in(&d, &["**/*.hocon"]);
    assert_eq!(ids(&output), ["a", "sub/b", "sub/deeper/c", "sub/outside/e"], "{}", stdout(&output));
}

#[test]
fn a_glob_without_double_star_and_one_matching_nothing_behave_as_before() {
    let root = tempfile::tempdir().unwrap();
    case(&root.path().join("x/one.hocon"));
    case(&root.path().join("y/two.hocon"));
    let output = list_in(root.path(), &["*/*.hocon"]);
    assert_eq!(ids(&output), ["x/one", "y/two"], "{}", stdout(&output));
    let output = list_in(root.path(), &["nowhere/**/*.hocon"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("the pattern `nowhere/**/*.hocon` matches no files"), "{}", stderr(&output));
}
