//! The OpenSearch index loader against a cluster written here: a server on
//! 127.0.0.1 that speaks the part of OpenSearch's REST API the loader may
//! use (create, delete, `_bulk`, `_refresh`), keeps its indices in memory,
//! and checks every `_bulk` body line by line (an action line, then its
//! source; NDJSON with its content type and a final newline). And the date
//! templates over the seed's own spec lines.

use crate::util::root;
use assay::formats::suite::dates::{DocumentsOfState, resolve_line};
use assay::formats::suite::opensearch::load_cluster_state;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One request as the cluster got it.
#[derive(Clone, Debug)]
struct Seen {
    /// `PUT /accounts`, `POST /_bulk`.
    line: String,
    authorization: Option<String>,
    /// The `_bulk` documents it carried: (index, `_id` if sent, source).
    bulk: Vec<(String, Option<String>, Value)>,
}

/// One index: its create body and documents by `_id`.
#[derive(Debug, Default)]
struct Index {
    create_body: Value,
    documents: BTreeMap<String, Value>,
    refreshed: bool,
}

#[derive(Debug, Default)]
struct State {
    indices: BTreeMap<String, Index>,
    seen: Vec<Seen>,
    /// What the cluster found wrong with a request: must stay empty.
    violations: Vec<String>,
    /// Documents (by `_id`) the cluster refuses to index.
    refused_ids: HashSet<String>,
    /// Every request gets this status (a broken cluster).
    fail_with: Option<u16>,
    next_id: usize,
}

/// The cluster, running on its own runtime.
struct Cluster {
    port: u16,
    state: Arc<Mutex<State>>,
    _runtime: tokio::runtime::Runtime,
}

impl Cluster {
    fn start() -> Cluster {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let state = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(state.clone(), request));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Cluster { port, state, _runtime: runtime }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    fn lines(&self) -> Vec<String> {
        self.state().seen.iter().map(|s| s.line.clone()).collect()
    }
}

async fn answer(state: Arc<Mutex<State>>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let header = |name: &str| request.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let (content_type, authorization) = (header("content-type"), header("authorization"));
    let body = request.into_body().collect().await?.to_bytes();
    let mut state = state.lock().unwrap();
    let mut seen = Seen { line: format!("{method} {path}"), authorization, bulk: Vec::new() };
    let (status, reply) = if let Some(status) = state.fail_with {
        (status, json!({"error": "the cluster is on fire"}))
    } else {
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match (method.as_str(), segments.as_slice()) {
            ("PUT", [index]) => create(&mut state, index, &content_type, &body),
            ("DELETE", [index]) => match state.indices.remove(*index) {
                Some(_) => (200, json!({"acknowledged": true})),
                None => (404, error("index_not_found_exception", &format!("no such index [{index}]"))),
            },
            ("POST", ["_bulk"]) => bulk(&mut state, &mut seen, &content_type, &body),
            ("POST", [index, "_refresh"]) => match state.indices.get_mut(*index) {
                Some(index) => {
                    index.refreshed = true;
                    (200, json!({"_shards": {"total": 1, "successful": 1, "failed": 0}}))
                }
                None => (404, error("index_not_found_exception", &format!("no such index [{index}]"))),
            },
            _ => {
                state.violations.push(format!("an unexpected request: {method} {path}"));
                (400, error("illegal_argument_exception", "unexpected"))
            }
        }
    };
    state.seen.push(seen);
    let response = Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(reply.to_string())))
        .unwrap();
    Ok(response)
}

fn error(kind: &str, reason: &str) -> Value {
    json!({"error": {"root_cause": [{"type": kind, "reason": reason}], "type": kind, "reason": reason}, "status": 400})
}

fn create(state: &mut State, index: &str, content_type: &Option<String>, body: &[u8]) -> (u16, Value) {
    if content_type.as_deref() != Some("application/json") {
        state.violations.push(format!("PUT /{index} has content type {content_type:?}"));
    }
    if index.chars().any(|c| c.is_ascii_uppercase()) {
        return (
            400,
            error("invalid_index_name_exception", &format!("Invalid index name [{index}], must be lowercase")),
        );
    }
    if state.indices.contains_key(index) {
        let reason = format!("index [{index}/x1Yq] already exists");
        return (400, error("resource_already_exists_exception", &reason));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(create_body) if create_body.get("mappings").is_some_and(Value::is_object) => {
            state.indices.insert(index.to_owned(), Index { create_body, ..Index::default() });
            (200, json!({"acknowledged": true, "shards_acknowledged": true, "index": index}))
        }
        _ => (400, error("mapper_parsing_exception", "failed to parse mapping")),
    }
}

/// Indexes a `_bulk` body, checking it line by line.
fn bulk(state: &mut State, seen: &mut Seen, content_type: &Option<String>, body: &[u8]) -> (u16, Value) {
    let mut violations = Vec::new();
    if content_type.as_deref() != Some("application/x-ndjson") {
        violations.push(format!("POST /_bulk has content type {content_type:?}"));
    }
    let text = String::from_utf8(body.to_vec()).unwrap();
    if !text.ends_with('\n') {
        violations.push("the bulk body does not end with a newline".to_owned());
    }
    let lines: Vec<&str> = text.strip_suffix('\n').unwrap_or(&text).split('\n').collect();
    if !lines.len().is_multiple_of(2) {
        violations.push(format!("the bulk body has {} lines, not pairs", lines.len()));
    }
    let mut items = Vec::new();
    let mut errors = false;
    for (n, pair) in lines.chunks(2).enumerate() {
        let action: Value = serde_json::from_str(pair[0]).unwrap_or(Value::Null);
        let source: Value = pair.get(1).and_then(|s| serde_json::from_str(s).ok()).unwrap_or(Value::Null);
        let Some(operation) = action.get("index").filter(|_| action.as_object().unwrap().len() == 1) else {
            violations.push(format!("pair {n}: `{}` is not an index action line", pair[0]));
            continue;
        };
        let index = operation["_index"].as_str().unwrap_or_default().to_owned();
        let id = operation.get("_id").map(|id| id.as_str().expect("an _id is a string").to_owned());
        if !source.is_object() || source.get("_id").is_some() {
            violations.push(format!("pair {n}: `{}` is not a source line", pair.get(1).unwrap_or(&"")));
        }
        seen.bulk.push((index.clone(), id.clone(), source.clone()));
        let stored_id = id.unwrap_or_else(|| {
            state.next_id += 1;
            format!("auto-{}", state.next_id)
        });
        if state.refused_ids.contains(&stored_id) {
            errors = true;
            let reason = "failed to parse field [age] of type [long] in document";
            items.push(json!({"index": {"_index": index, "_id": stored_id, "status": 400,
                "error": {"type": "mapper_parsing_exception", "reason": reason}}}));
            continue;
        }
        match state.indices.get_mut(&index) {
            Some(stored) => {
                stored.documents.insert(stored_id.clone(), source);
                items.push(json!({"index": {"_index": index, "_id": stored_id, "status": 201, "result": "created"}}));
            }
            None => violations.push(format!("pair {n}: documents for index `{index}`, which was never created")),
        }
    }
    let failed = !violations.is_empty();
    state.violations.extend(violations);
    if failed {
        return (400, error("illegal_argument_exception", "malformed bulk body"));
    }
    (200, json!({"took": 3, "errors": errors, "items": items}))
}

/// An index group folder: `files` are (path under it, text).
fn indices(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

fn load(url: &str, dir: &Path, state: &str, recreate: bool) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(load_cluster_state(url, &assay::case::FileAccess::anywhere(), dir, state, recreate))
}

const ACCOUNTS_MAPPINGS: &str = r#"{"properties":{"age":{"type":"long"},"name":{"type":"keyword"}}}"#;

/// An alerting group (documents with ids) and a logs group of 2,500 lines
/// without ids (three bulk requests), one with an `_id` of its own.
fn alerting_and_logs() -> tempfile::TempDir {
    let mut logs: String = (0..2_500).map(|i| format!("{{\"n\":{i},\"msg\":\"line {i}\"}}\n")).collect();
    logs.push_str("\n{\"_id\":\"pinned\",\"n\":-1}");
    indices(&[
        ("alerting/.opendistro-alerting-alerts/mappings.json", r#"{"properties":{"start_time":{"type":"date"}}}"#),
        (
            "alerting/.opendistro-alerting-alerts/documents.ndjson",
            "{\"id\":\"uzg0gosB6jqYe1T0y9Aa\",\"start_time\":1701870005000}\n{\"id\":\"GThUkYsB6jqYe1T0UOF3\",\"start_time\":1701870005001}\n",
        ),
        (
            "alerting/logs/mappings.json",
            r#"{"settings":{"number_of_shards":1},"mappings":{"properties":{"n":{"type":"long"}}}}"#,
        ),
        ("alerting/logs/documents.ndjson", &logs),
        ("alerting/.DS_Store", "not an index"),
        ("other/accounts/mappings.json", ACCOUNTS_MAPPINGS),
        ("other/accounts/documents.ndjson", "{\"age\":1}\n"),
    ])
}

#[test]
fn every_document_reaches_bulk_as_an_action_line_then_its_source() {
    let cluster = Cluster::start();
    let dir = alerting_and_logs();
    let url = format!("http://admin:s3cret@127.0.0.1:{}", cluster.port);
    load(&url, dir.path(), "alerting", false).unwrap_or_else(|e| panic!("{e}\n{:?}", cluster.state().violations));

    let state = cluster.state();
    assert_eq!(state.violations, Vec::<String>::new());
    let lines: Vec<&str> = state.seen.iter().map(|s| s.line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "PUT /.opendistro-alerting-alerts",
            "POST /_bulk",
            "POST /.opendistro-alerting-alerts/_refresh",
            "PUT /logs",
            "POST /_bulk",
            "POST /_bulk",
            "POST /_bulk",
            "POST /logs/_refresh",
        ]
    );
    // The URL's userinfo is basic authentication on every request.
    for seen in &state.seen {
        assert_eq!(seen.authorization.as_deref(), Some("Basic YWRtaW46czNjcmV0"), "{}", seen.line);
    }
    // Batches of 1,000; the alerts go by their `id`, `_id` leaves the source.
    let batch_sizes: Vec<usize> = state.seen.iter().filter(|s| !s.bulk.is_empty()).map(|s| s.bulk.len()).collect();
    assert_eq!(batch_sizes, [2, 1_000, 1_000, 501]);
    let alerts = &state.seen[1].bulk;
    assert_eq!(
        *alerts,
        [
            (
                ".opendistro-alerting-alerts".to_owned(),
                Some("uzg0gosB6jqYe1T0y9Aa".to_owned()),
                json!({"id": "uzg0gosB6jqYe1T0y9Aa", "start_time": 1701870005000_u64})
            ),
            (
                ".opendistro-alerting-alerts".to_owned(),
                Some("GThUkYsB6jqYe1T0UOF3".to_owned()),
                json!({"id": "GThUkYsB6jqYe1T0UOF3", "start_time": 1701870005001_u64})
            ),
        ]
    );
    let logs: Vec<&(String, Option<String>, Value)> = state.seen.iter().flat_map(|s| &s.bulk).skip(2).collect();
    assert_eq!(logs.len(), 2_501);
    for (i, (index, id, source)) in logs.iter().take(2_500).enumerate() {
        assert_eq!((index.as_str(), id), ("logs", &None));
        assert_eq!(*source, json!({"n": i, "msg": format!("line {i}")}));
    }
    assert_eq!(*logs[2_500], ("logs".to_owned(), Some("pinned".to_owned()), json!({"n": -1})));

    // Mappings alone are wrapped; a whole create body is sent as it is.
    assert_eq!(
        state.indices[".opendistro-alerting-alerts"].create_body,
        json!({"mappings": {"properties": {"start_time": {"type": "date"}}}})
    );
    assert_eq!(state.indices["logs"].create_body["settings"], json!({"number_of_shards": 1}));
    assert_eq!(state.indices["logs"].documents.len(), 2_501);
    assert!(state.indices.values().all(|index| index.refreshed));
    assert!(!state.indices.contains_key("accounts"), "only the state's own group loads");
}

#[test]
fn an_existing_index_is_left_alone_and_recreate_replaces_it() {
    let cluster = Cluster::start();
    let dir = indices(&[
        ("custom/accounts/mappings.json", ACCOUNTS_MAPPINGS),
        ("custom/accounts/documents.ndjson", "{\"id\":\"a\",\"age\":30}\n{\"id\":\"b\",\"age\":40}\n"),
        ("custom/cities/mappings.json", r#"{"properties":{}}"#),
        ("custom/cities/documents.ndjson", "{\"name\":\"Brogan\"}\n"),
    ]);
    let stale = Index {
        create_body: json!({"mappings": {}}),
        documents: [("old".to_owned(), json!({"age": 1}))].into(),
        refreshed: false,
    };
    cluster.state().indices.insert("accounts".to_owned(), stale);

    load(&cluster.url(), dir.path(), "custom", false).unwrap();
    assert_eq!(cluster.lines(), ["PUT /accounts", "PUT /cities", "POST /_bulk", "POST /cities/_refresh"]);
    assert_eq!(cluster.state().indices["accounts"].documents.keys().collect::<Vec<_>>(), ["old"]);
    assert_eq!(cluster.state().indices["cities"].documents.len(), 1);

    cluster.state().seen.clear();
    load(&cluster.url(), dir.path(), "custom", true).unwrap();
    assert_eq!(
        cluster.lines(),
        [
            "DELETE /accounts",
            "PUT /accounts",
            "POST /_bulk",
            "POST /accounts/_refresh",
            "DELETE /cities",
            "PUT /cities",
            "POST /_bulk",
            "POST /cities/_refresh",
        ]
    );
    let state = cluster.state();
    assert_eq!(state.violations, Vec::<String>::new());
    assert_eq!(state.indices["accounts"].documents.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(
        state.indices["accounts"].create_body,
        json!({"mappings": serde_json::from_str::<Value>(ACCOUNTS_MAPPINGS).unwrap()})
    );
    assert_eq!(state.indices["cities"].documents.len(), 1, "recreated, not filled twice");
}

#[test]
fn recreate_of_an_index_that_is_not_there_creates_it() {
    let cluster = Cluster::start();
    let dir =
        indices(&[("custom/accounts/mappings.json", ACCOUNTS_MAPPINGS), ("custom/accounts/documents.ndjson", "")]);
    load(&cluster.url(), dir.path(), "custom", true).unwrap();
    // An empty documents file: the index is created and refreshed, no bulk.
    assert_eq!(cluster.lines(), ["DELETE /accounts", "PUT /accounts", "POST /accounts/_refresh"]);
}

#[test]
fn documents_the_cluster_refuses_are_reported_each_with_its_line_and_id() {
    let cluster = Cluster::start();
    let documents: String = (0..10).map(|i| format!("{{\"id\":\"d{i}\",\"age\":{i}}}\n")).collect();
    let dir = indices(&[
        ("custom/accounts/mappings.json", ACCOUNTS_MAPPINGS),
        ("custom/accounts/documents.ndjson", &documents),
    ]);
    cluster.state().refused_ids = ["d1", "d3", "d4", "d5", "d6", "d8", "d9"].map(str::to_owned).into();

    let error = load(&cluster.url(), dir.path(), "custom", false).unwrap_err();
    let file = dir.path().join("custom/accounts/documents.ndjson");
    let file = file.display();
    let reason = "400 mapper_parsing_exception: failed to parse field [age] of type [long] in document";
    assert_eq!(
        error,
        format!(
            "load cluster state `custom` into `{}`: index `accounts`: the cluster refused 7 of its 10 documents: \
             `{file}:2` (`_id` `d1`): {reason}; `{file}:4` (`_id` `d3`): {reason}; `{file}:5` (`_id` `d4`): {reason}; \
             `{file}:6` (`_id` `d5`): {reason}; `{file}:7` (`_id` `d6`): {reason}; and 2 more; fix those lines (or the \
             index's mappings), then load again with `recreate = true`",
            cluster.url()
        )
    );
    // Not refreshed: the load failed.
    assert_eq!(cluster.lines(), ["PUT /accounts", "POST /_bulk"]);
}

#[test]
fn a_server_error_names_the_state_the_index_the_status_and_no_password() {
    let cluster = Cluster::start();
    cluster.state().fail_with = Some(503);
    let dir = indices(&[("alerting/alerts/mappings.json", "{}"), ("alerting/alerts/documents.ndjson", "{}\n")]);
    let url = format!("http://admin:s3cret@127.0.0.1:{}", cluster.port);
    let error = load(&url, dir.path(), "alerting", false).unwrap_err();
    assert_eq!(
        error,
        format!(
            "load cluster state `alerting` into `http://[redacted]@127.0.0.1:{}`: index `alerts`: the cluster answered \
             503 Service Unavailable to PUT /alerts: {{\"error\":\"the cluster is on fire\"}}; check the cluster's \
             health and logs, then load again",
            cluster.port
        )
    );
}

#[test]
fn a_refused_connection_says_where_to_look_and_shows_no_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = indices(&[("alerting/alerts/mappings.json", "{}"), ("alerting/alerts/documents.ndjson", "{}\n")]);
    let error = load(&format!("http://admin:s3cret@127.0.0.1:{port}"), dir.path(), "alerting", false).unwrap_err();
    let start = format!(
        "load cluster state `alerting` into `http://[redacted]@127.0.0.1:{port}`: index `alerts`: PUT /alerts could not connect ("
    );
    assert!(error.starts_with(&start), "{error}");
    assert!(
        error.ends_with(&format!(
            "); is OpenSearch running at `http://[redacted]@127.0.0.1:{port}`? check `[setup] opensearch.url`"
        )),
        "{error}"
    );
    assert!(!error.contains("s3cret"), "{error}");
}

#[test]
fn a_malformed_file_is_located_and_nothing_reaches_the_cluster() {
    let cluster = Cluster::start();
    let good = ("custom/a_good/documents.ndjson", "{\"n\":1}\n");
    let bad_documents = indices(&[
        ("custom/a_good/mappings.json", "{}"),
        good,
        ("custom/b_bad/mappings.json", "{}"),
        ("custom/b_bad/documents.ndjson", "{\"n\":1}\n\n{\"n\":2,}\n"),
    ]);
    let error = load(&cluster.url(), bad_documents.path(), "custom", false).unwrap_err();
    let file = bad_documents.path().join("custom/b_bad/documents.ndjson");
    assert!(
        error.starts_with(&format!("load cluster state `custom`: read `{}:3`: it is not JSON (", file.display())),
        "{error}"
    );
    assert!(error.ends_with("); write one JSON object per line (NDJSON)"), "{error}");

    let bad_mappings = indices(&[
        ("custom/a_good/mappings.json", "{}"),
        good,
        ("custom/b_bad/mappings.json", "{\n  \"properties\": {\n}"),
        ("custom/b_bad/documents.ndjson", ""),
    ]);
    let error = load(&cluster.url(), bad_mappings.path(), "custom", false).unwrap_err();
    let file = bad_mappings.path().join("custom/b_bad/mappings.json");
    assert!(
        error.starts_with(&format!("load cluster state `custom`: read `{}:3`: it is not JSON (", file.display())),
        "{error}"
    );

    let no_state = load(&cluster.url(), bad_mappings.path(), "alerting", false).unwrap_err();
    assert_eq!(
        no_state,
        format!(
            "load cluster state `alerting`: there is no folder `alerting` under `{}` (it has `custom`); add the folder, \
             or add `alerting` to `[setup] skip`",
            bad_mappings.path().display()
        )
    );
    assert_eq!(cluster.lines(), Vec::<String>::new());
}

#[test]
fn a_bad_index_name_names_its_folder_and_mappings_that_are_no_object_their_file() {
    let cluster = Cluster::start();
    let dir = indices(&[("custom/Accounts/mappings.json", "{}"), ("custom/Accounts/documents.ndjson", "{}\n")]);
    let error = load(&cluster.url(), dir.path(), "custom", false).unwrap_err();
    assert_eq!(
        error,
        format!(
            "load cluster state `custom` into `{}`: index `Accounts`: the cluster refused to create it (400 \
             invalid_index_name_exception: Invalid index name [Accounts], must be lowercase); rename the folder `{}` \
             (lowercase, no spaces)",
            cluster.url(),
            dir.path().join("custom/Accounts").display()
        )
    );
    let dir = indices(&[("custom/accounts/mappings.json", "[]"), ("custom/accounts/documents.ndjson", "")]);
    let error = load(&cluster.url(), dir.path(), "custom", false).unwrap_err();
    let file = dir.path().join("custom/accounts/mappings.json");
    assert_eq!(
        error,
        format!(
            "load cluster state `custom`: read `{}`: the mappings must be a JSON object (e.g. {{\"properties\": \
             {{…}}}}), not an array",
            file.display()
        )
    );
}

#[test]
#[ignore = "reads the seed's index groups in ../shared/reference, which are not part of this repository"]
fn every_reference_index_group_loads() {
    let folder = root().join("../shared/reference/opensearch/indices");
    assert!(folder.is_dir(), "{} does not exist: this test needs the seed's index groups there", folder.display());
    let cluster = Cluster::start();
    let mut loaded = 0;
    for group in std::fs::read_dir(&folder).unwrap() {
        let group = group.unwrap();
        if !group.path().is_dir() {
            continue;
        }
        let state = group.file_name().to_string_lossy().into_owned();
        load(&cluster.url(), &folder, &state, false).unwrap_or_else(|e| panic!("{e}"));
        for index in std::fs::read_dir(group.path()).unwrap() {
            let index = index.unwrap();
            let text = std::fs::read_to_string(index.path().join("documents.ndjson")).unwrap();
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            let name = index.file_name().to_string_lossy().into_owned();
            let state = cluster.state();
            assert_eq!(state.indices[&name].documents.len(), lines, "index {name}");
            assert!(state.indices[&name].refreshed, "{name}");
            loaded += 1;
        }
    }
    assert_eq!(cluster.state().violations, Vec::<String>::new());
    assert!(loaded > 0, "{} holds no index group", folder.display());
}

#[test]
#[ignore = "reads the seed's spec files in ../shared/reference, which are not part of this repository"]
fn every_date_template_of_the_reference_specs_resolves_and_no_other_text_changes() {
    let folder = root().join("../shared/reference/opensearch");
    assert!(folder.is_dir(), "{} does not exist: this test needs the seed's spec files there", folder.display());
    let template = regex::Regex::new(r"<([A-Za-z0-9_-]+)\.[a-z_]+,(date|dateAndTime)>").unwrap();
    let mut lines = Vec::new();
    for sub in ["specs", "skills-eval-specs"] {
        for entry in std::fs::read_dir(folder.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read_to_string(&path).unwrap();
                lines.extend(text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned));
            }
        }
    }
    // Every alert a template names, with every time field the seed uses:
    // 2023-12-06T13:40:05Z.
    let ids: std::collections::BTreeSet<String> =
        lines.iter().flat_map(|line| template.captures_iter(line).map(|c| c[1].to_owned())).collect();
    assert!(ids.len() >= 8, "{ids:?}");
    let alerts: String = ids
        .iter()
        .map(|id| {
            let at = 1_701_870_005_000_u64;
            format!("{{\"id\":\"{id}\",\"start_time\":{at},\"end_time\":{at},\"acknowledged_time\":{at},\"last_notification_time\":{at}}}\n")
        })
        .collect();
    let dir = indices(&[
        ("alerting/.opendistro-alerting-alerts/mappings.json", "{}"),
        ("alerting/.opendistro-alerting-alerts/documents.ndjson", &alerts),
    ]);
    let alerting = DocumentsOfState::read(&assay::case::FileAccess::anywhere(), dir.path(), "alerting").unwrap();
    let mut resolved = 0;
    for text in &lines {
        let Value::Object(mut line) = serde_json::from_str(text).unwrap() else { panic!("{text}") };
        let original = line.clone();
        let state = line["clusterStateId"].as_str().unwrap().to_owned();
        let documents = if state == "alerting" { alerting.clone() } else { DocumentsOfState::empty(&state) };
        resolve_line(&mut line, &documents).unwrap_or_else(|e| panic!("{e}: {text}"));
        let after = Value::Object(line).to_string();
        assert!(!template.is_match(&after), "{after}");
        if template.is_match(text) {
            assert!(after.contains("Dec 06"), "{after}");
            resolved += 1;
        } else {
            assert_eq!(Value::Object(original).to_string(), after, "text that is no template changed");
        }
    }
    assert!(resolved >= 8, "only {resolved} lines had templates");
}

/// A suite whose setup loads its index groups into the cluster and whose
/// spec lines' date templates resolve from them, in the suite's time zone.
const LOADING_SUITE: &str = r#"
specs = ["*.jsonl"]
agent = "echo"
text = "{{question}}"

[setup]
SETUP
skip = ["none"]
time_zone = "Europe/Paris"

[[checks]]
key = "value"
expected = "{{expectedAnswer}}"
"#;

const DATED_SPECS: &str = r#"{"id":"day","clusterStateId":"alerting","question":"alerts on <a1.start_time,date>?","expectedAnswer":"alerts on Dec 06?"}
{"id":"time","clusterStateId":"alerting","question":"the alert at <a1.start_time,dateAndTime>","expectedAnswer":"the alert at <a1.start_time,dateAndTime>"}
{"id":"plain","clusterStateId":"none","question":"no <dates> here","expectedAnswer":"no <dates> here"}
"#;

/// `assay run` of a suite folder: its results by id.
fn run_suite(dir: &Path, setup: &str) -> (std::process::Output, BTreeMap<String, Value>) {
    std::fs::write(dir.join("qa.suite.toml"), LOADING_SUITE.replace("SETUP", setup)).unwrap();
    std::fs::write(dir.join("specs.jsonl"), DATED_SPECS).unwrap();
    let out = dir.join("results");
    let _ = std::fs::remove_dir_all(&out);
    // An OpenSearch load is data's to ask for; a command, a trusted file's.
    let trusted: &[&str] = if setup.contains("command") { &["--allow-commands"] } else { &[] };
    let output =
        crate::util::assay(&[&["run", dir.to_str().unwrap(), "--results", out.to_str().unwrap()], trusted].concat());
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap_or_default();
    let lines = text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap());
    (output, lines.map(|l| (l["id"].as_str().unwrap().to_owned(), l)).collect())
}

#[test]
fn a_suite_loads_its_states_indices_once_and_answers_its_date_templates_from_them() {
    let cluster = Cluster::start();
    let dir = indices(&[
        ("data/alerting/alerts/mappings.json", r#"{"properties":{"start_time":{"type":"date"}}}"#),
        // 14:00 UTC is 15:00 in Paris in December.
        ("data/alerting/alerts/documents.ndjson", "{\"_id\":\"a1\",\"start_time\":1733493600000}\n"),
    ]);
    let setup = format!("opensearch = {{ url = \"{}\", indices = \"data\" }}", cluster.url());
    let (output, results) = run_suite(dir.path(), &setup);
    assert_eq!(output.status.code(), Some(0), "{}{}", crate::util::stdout(&output), crate::util::stderr(&output));
    assert_eq!(results.len(), 3);
    assert!(results.values().all(|line| line["status"] == "passed"), "{results:?}");
    assert_eq!(
        cluster.lines(),
        ["PUT /alerts", "POST /_bulk", "POST /alerts/_refresh"],
        "the state `alerting` loaded once, `none` never"
    );
    assert!(cluster.state().violations.is_empty(), "{:?}", cluster.state().violations);

    // A command setup reads the same documents through `[setup] indices`.
    let script = dir.path().join("setup.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (output, results) =
        run_suite(dir.path(), "command = [\"./setup.sh\", \"{{clusterStateId}}\"]\nindices = \"data\"");
    assert_eq!(output.status.code(), Some(0), "{}{}", crate::util::stdout(&output), crate::util::stderr(&output));
    let asked = &results["qa/time"]["samples"][0]["runs"][0]["interactions"][0]["response"]["text"];
    assert_eq!(asked, "the alert at Dec 06 15:00", "the question went out resolved");
    let expected = &results["qa/time"]["samples"][0]["runs"][0]["interactions"][0]["checks"][0]["expected"];
    assert_eq!(expected, "the alert at Dec 06 15:00", "and the expected answer was resolved too");

    // A template naming a document the state does not have is that line's
    // error, naming the id.
    let broken = DATED_SPECS.replace("<a1.start_time,date>", "<a9.start_time,date>");
    std::fs::write(dir.path().join("specs.jsonl"), &broken).unwrap();
    let out = dir.path().join("results");
    let _ = std::fs::remove_dir_all(&out);
    crate::util::assay(&["run", "--allow-commands", dir.path().to_str().unwrap(), "--results", out.to_str().unwrap()]);
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let day: Value =
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|l| l["id"] == "qa/day").unwrap();
    assert_eq!(day["status"], "error", "{day}");
    let message = day["error"]["message"].as_str().unwrap();
    assert!(message.contains("line 1: its date templates") && message.contains("a9"), "{message}");
}
