//! Where a run's cases run: an in-process case (all CPU work) on one of at
//! most one thread per CPU, and a case whose checks wait on the network on
//! tasks, so that `-j` of them wait at once however few the CPUs.

use crate::util::{load, run_dir};
use assay::agent::HttpSettings;
use assay::plugin::Registry;
use assay::run::RunOptions;
use assay::sandbox::host::CapabilitySpend;
use assay::sandbox::host::embeddings::Embeddings;
use assay::sandbox::{Answered, Capabilities, ComponentOptions, Grants};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// More cases than this machine's CPUs, all in flight at once with `-j`.
const CASES: usize = 12;

/// An embeddings backend that holds each call until [`CASES`] calls are in
/// it at once (or 5 s have passed), and records the most it saw.
#[derive(Default)]
struct Rendezvous {
    inside: Mutex<usize>,
    changed: Condvar,
    most: AtomicUsize,
}

impl Embeddings for Rendezvous {
    fn embed(&self, texts: &[String], _: &CapabilitySpend) -> Answered<Vec<Vec<f32>>> {
        let started = Instant::now();
        let mut inside = self.inside.lock().unwrap();
        *inside += 1;
        self.most.fetch_max(*inside, Ordering::SeqCst);
        self.changed.notify_all();
        let (mut inside, _) = self
            .changed
            .wait_timeout_while(inside, Duration::from_secs(5), |_| self.most.load(Ordering::SeqCst) < CASES)
            .unwrap();
        *inside -= 1;
        Answered { answer: Ok(vec![vec![1.0, 0.0]; texts.len()]), waited: started.elapsed() }
    }

    fn embed_tokens(&self, _texts: &[String], _: &CapabilitySpend) -> Answered<Vec<Vec<Vec<f32>>>> {
        Answered::at_once(Err("sentence vectors only".into()))
    }
}

#[test]
fn cases_waiting_on_an_embeddings_backend_wait_together_not_one_per_cpu() {
    let dir = tempfile::tempdir().unwrap();
    for case in 0..CASES {
        let text = r#"{ "agent": "echo", "connections": ["direct"],
                        "interactions": [ { "text": "hello", "response": { "text": { "probe_embeddings": null } } } ] }"#;
        std::fs::write(dir.path().join(format!("c{case:02}.hocon")), text).unwrap();
    }
    let backend = Arc::new(Rendezvous::default());
    let mut options =
        ComponentOptions { grants: Grants { log: true, judge: true, embeddings: true }, ..ComponentOptions::default() };
    options.capabilities = Capabilities { judge: None, embeddings: Some(backend.clone()) };
    let mut registry = Registry::new();
    registry.add(load("plugins/capability-probe/capability-probe.wasm", options).unwrap()).unwrap();
    let options = RunOptions { jobs: CASES, ..RunOptions::default() };
    let (results, summary) = run_dir(Arc::new(registry), dir.path(), HttpSettings::default(), options);

    assert_eq!(backend.most.load(Ordering::SeqCst), CASES, "the backend never had every case's call at once");
    assert_eq!((summary.cases, summary.passed), (CASES, CASES), "{results:?}");
}
