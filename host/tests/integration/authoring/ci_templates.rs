//! The CI templates of `docs/ci/`, as far as this machine can run them:
//! both parse, their structure holds (the matrix lists every shard, the
//! merge job needs the shard job, the Indexed Job's completions and
//! parallelism are the N of its `--shard`), and the shell they run (with
//! the engine's variables substituted: `${{ matrix.shard }}`,
//! `JOB_COMPLETION_INDEX`, the shared volume) runs the fixtures in shards
//! whose merge equals one run of them.

use crate::reports::shard::{statuses, summary};
use crate::util::{fixture, isolated, root};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Every document of the YAML file `docs/ci/NAME`.
fn documents(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(root().join("docs/ci").join(name)).unwrap();
    yaml_serde::Deserializer::from_str(&text).map(|doc| Value::deserialize(doc).unwrap()).collect()
}

/// N, from the `--shard …/N` in `script`.
fn shard_total(script: &str) -> u64 {
    let script = script.replace("${{ matrix.shard }}", "K");
    let at = script.find("--shard ").unwrap() + "--shard ".len();
    let shard = script[at..].split_whitespace().next().unwrap().trim_matches('"');
    shard.rsplit('/').next().unwrap().parse().unwrap()
}

/// `script` run by `shell` in `dir`, with the `assay` under test first on
/// the PATH and `env` set.
fn sh(shell: &str, script: &str, dir: &Path, env: &[(&str, &str)]) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_assay")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut command = Command::new(shell);
    isolated(&mut command).current_dir(dir).env("PATH", path).args(["-c", script]);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Copies the directory `from` to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// One run of the fixtures, to compare a merge with.
fn single_run(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("single");
    let output = sh("sh", &format!("assay run cases --results {} -q", out.display()), dir, &[]);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", text(&output));
    out
}

#[test]
fn the_github_actions_workflow_shards_uploads_and_merges_and_its_shell_runs() {
    let workflow = &documents("github-actions.yml")[0];
    let jobs = &workflow["jobs"];
    let shard_job = &jobs["shard"];
    let merge_job = &jobs["merge"];
    assert_eq!(merge_job["needs"], "shard");
    assert_eq!(shard_job["strategy"]["fail-fast"], false);
    let steps = |job: &Value| job["steps"].as_array().unwrap().clone();
    let run_step =
        steps(shard_job).into_iter().find(|s| s["run"].as_str().is_some_and(|r| r.contains("assay run"))).unwrap();
    let script = run_step["run"].as_str().unwrap();
    let total = shard_total(script);
    let matrix: Vec<u64> =
        shard_job["strategy"]["matrix"]["shard"].as_array().unwrap().iter().map(|k| k.as_u64().unwrap()).collect();
    assert_eq!(matrix, (1..=total).collect::<Vec<_>>(), "the matrix lists every shard of {total}");
    let upload = steps(shard_job)
        .into_iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/upload-artifact")))
        .unwrap();
    let download = steps(merge_job)
        .into_iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/download-artifact")))
        .unwrap();
    let artifact = upload["with"]["name"].as_str().unwrap();
    let pattern = download["with"]["pattern"].as_str().unwrap();
    assert!(artifact.starts_with(pattern.trim_end_matches('*')), "{artifact} matches {pattern}");
    let merge_script = steps(merge_job)
        .into_iter()
        .find_map(|s| s["run"].as_str().filter(|r| r.contains("assay merge")).map(str::to_owned))
        .unwrap();

    // Each shard in a checkout of its own, `tests/assay` the fixtures;
    // each upload's directory downloaded as actions/download-artifact
    // does with a pattern: into `PATH/ARTIFACT-NAME/`.
    let dir = tempfile::tempdir().unwrap();
    let merge_dir = dir.path().join("merge");
    let download_path = merge_dir.join(download["with"]["path"].as_str().unwrap());
    for k in 1..=total {
        let checkout = dir.path().join(format!("checkout-{k}"));
        copy_dir(&fixture("cases"), &checkout.join("tests/assay"));
        let script = script.replace("${{ matrix.shard }}", &k.to_string());
        let output = sh("bash", &script, &checkout, &[]);
        assert_eq!(output.status.code(), Some(0), "shard {k}: {}", text(&output));
        let uploaded = upload["with"]["path"].as_str().unwrap().replace("${{ matrix.shard }}", &k.to_string());
        let name = artifact.replace("${{ matrix.shard }}", &k.to_string());
        copy_dir(&checkout.join(uploaded), &download_path.join(name));
    }
    let output = sh("bash", &merge_script, &merge_dir, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));

    copy_dir(&fixture("cases"), &dir.path().join("cases"));
    let single = single_run(dir.path());
    let merged = merge_dir.join("results/merged");
    assert_eq!(statuses(&merged), statuses(&single));
    assert_eq!(summary(&merged)["cases"], summary(&single)["cases"]);
    assert_eq!(summary(&merged)["merged_from"].as_array().unwrap().len() as u64, total);
    for file in ["junit.xml", "report.html"] {
        assert!(merged.join(file).is_file(), "{file}");
    }

    // The merge job fails the workflow when a case failed: its exit code.
    let failing = merge_dir.join("shards/assay-shard-1/results.jsonl");
    let lines =
        std::fs::read_to_string(&failing).unwrap().replacen("\"status\":\"passed\"", "\"status\":\"failed\"", 1);
    std::fs::write(&failing, lines).unwrap();
    std::fs::remove_dir_all(&merged).unwrap();
    assert_eq!(sh("bash", &merge_script, &merge_dir, &[]).status.code(), Some(1));
}

#[test]
fn the_kubernetes_indexed_job_maps_its_index_to_a_shard_on_a_shared_volume_and_its_shell_runs() {
    let documents = documents("k8s-indexed-job.yaml");
    let find = |kind: &str, name: &str| {
        documents
            .iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    };
    let claim = find("PersistentVolumeClaim", "assay-results");
    assert!(claim["spec"]["accessModes"].as_array().unwrap().contains(&Value::from("ReadWriteMany")));
    let shards = find("Job", "assay-shards");
    let merge = find("Job", "assay-merge");
    let container = |job: &Value| job["spec"]["template"]["spec"]["containers"][0].clone();
    let script = |job: &Value| container(job)["args"][0].as_str().unwrap().to_owned();
    let (shard_script, merge_script) = (script(shards), script(merge));
    assert_eq!(shards["spec"]["completionMode"], "Indexed");
    let total = shard_total(&shard_script);
    assert_eq!(shards["spec"]["completions"], total);
    assert_eq!(shards["spec"]["parallelism"], total);
    assert!(shard_script.contains("JOB_COMPLETION_INDEX"));
    // Both Jobs mount the claim at the same place.
    for job in [shards, merge] {
        let volume = &job["spec"]["template"]["spec"]["volumes"][0];
        assert_eq!(volume["persistentVolumeClaim"]["claimName"], "assay-results");
        let mount = &container(job)["volumeMounts"][0];
        assert_eq!((&mount["name"], &mount["mountPath"]), (&volume["name"], &Value::from("/results")));
    }
    // `kubectl apply -l assay-step=…` applies the volume and shards first.
    assert_eq!(claim["metadata"]["labels"]["assay-step"], "shards");
    assert_eq!(shards["metadata"]["labels"]["assay-step"], "shards");
    assert_eq!(merge["metadata"]["labels"]["assay-step"], "merge");

    // Every index as its pod runs it, the volume and the image's /cases
    // being folders here.
    let dir = tempfile::tempdir().unwrap();
    let volume = dir.path().join("volume");
    copy_dir(&fixture("cases"), &dir.path().join("cases"));
    let local = |script: &str| {
        script
            .replace("/results", volume.to_str().unwrap())
            .replace("/cases", dir.path().join("cases").to_str().unwrap())
    };
    for index in 0..total {
        let output = sh("sh", &local(&shard_script), dir.path(), &[("JOB_COMPLETION_INDEX", &index.to_string())]);
        assert_eq!(output.status.code(), Some(0), "index {index}: {}", text(&output));
        assert_eq!(summary(&volume.join(format!("shard-{}", index + 1)))["shard"]["index"], index + 1);
    }
    let output = sh("sh", &local(&merge_script), dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let single = single_run(dir.path());
    assert_eq!(statuses(&volume.join("merged")), statuses(&single));
}
