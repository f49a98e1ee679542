//! The OpenSearch index loader: a suite's `[setup] opensearch = { url,
//! indices }` puts the index group of a cluster state into a cluster
//! before that state's first case, through the documented REST API that
//! OpenSearch and Elasticsearch share (`PUT /<index>`, `POST /_bulk`,
//! `POST /<index>/_refresh`, `DELETE /<index>`), and nothing else.
//!
//! Every file of the state is read and checked before the first request,
//! so a bad line leaves the cluster untouched. An index that exists is
//! left alone (its documents are not sent again) unless `recreate`, which
//! deletes it first. Documents go in batches of at most
//! [`BATCH_DOCUMENTS`] documents or [`BATCH_BYTES`] bytes; a document's
//! `_id` field, else its `id` field when no two documents of the index
//! share one, becomes its OpenSearch `_id` (the seed indexes alerts by
//! their `id`), others get one from the cluster.
//!
//! The URL's userinfo (`http://user:password@host:9200`) is sent as basic
//! authentication and never shown. The cluster's certificate must chain to
//! the usual roots: a private CA is not supported yet.

use super::index_group::{self, DocumentLine, IndexFolder};
use crate::case::FileAccess;
use crate::credentials::redact_urls;
use crate::net;
use reqwest::header::CONTENT_TYPE;
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// The most documents one `_bulk` request carries.
pub const BATCH_DOCUMENTS: usize = 1_000;
/// The most bytes of NDJSON one `_bulk` request carries (a single larger
/// document still goes, alone).
pub const BATCH_BYTES: usize = 5 << 20;
/// How long connecting to the cluster may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one request may take, answer included: a batch of 5 MiB on a
/// busy cluster takes seconds, not minutes.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// The most of an answer that is read (a bulk answer of a whole batch of
/// refused documents is well under it).
const ANSWER_CAP: usize = 32 << 20;
/// How many refused documents a bulk error lists before it counts the rest.
const LISTED_FAILURES: usize = 5;

/// Creates and fills every index of `indices_dir/<state>/` in the cluster
/// at `url`, then refreshes it, so that searches see its documents. An
/// index that already exists is left as it is, unless `recreate`, which
/// deletes it first.
///
/// The error reads after "failed to", names the state, the index and
/// (where one is to blame) the `file:line`, and suggests the fix; URLs in
/// it show no credentials.
pub async fn load_cluster_state(
    url: &str,
    access: &FileAccess,
    indices_dir: &Path,
    state: &str,
    recreate: bool,
) -> Result<(), String> {
    let cluster = Cluster::new(url).map_err(|e| format!("load cluster state `{state}`: {e}"))?;
    let indices = read_state(access, indices_dir, state).map_err(|e| format!("load cluster state `{state}`: {e}"))?;
    for index in &indices {
        cluster.load(index, recreate).await.map_err(|e| {
            format!("load cluster state `{state}` into `{}`: index `{}`: {e}", cluster.shown, index.folder.name)
        })?;
    }
    Ok(())
}

/// One index of the state, read and checked.
struct IndexToLoad {
    folder: IndexFolder,
    /// The body of `PUT /<index>`.
    create_body: Value,
    documents: Vec<DocumentLine>,
    /// Each document's `_id`, if it has one (same order).
    ids: Vec<Option<String>>,
}

/// Every index of `state`, its files read and checked.
fn read_state(access: &FileAccess, indices_dir: &Path, state: &str) -> Result<Vec<IndexToLoad>, String> {
    let mut indices = Vec::new();
    for folder in index_group::index_folders(access, indices_dir, state)? {
        let create_body = index_group::read_create_body(access, &folder.mappings_file())?;
        let documents = index_group::read_documents(access, &folder.documents_file())?;
        let ids = bulk_ids(&documents, &folder.documents_file())?;
        indices.push(IndexToLoad { folder, create_body, documents, ids });
    }
    Ok(indices)
}

/// The `_id` of each document: its `_id` field (two documents with one
/// `_id` are an error: the second would replace the first), else its `id`
/// field when no two documents share one, else none.
fn bulk_ids(documents: &[DocumentLine], file: &Path) -> Result<Vec<Option<String>>, String> {
    let mut metadata_lines: HashMap<String, usize> = HashMap::new();
    for document in documents {
        if let Some(id) = document.metadata_id()
            && let Some(first) = metadata_lines.insert(id.clone(), document.line)
        {
            return Err(format!(
                "read `{}:{}`: its `_id` `{id}` is the `_id` of line {first} too, and would replace that \
                 document; give each document its own `_id`",
                file.display(),
                document.line
            ));
        }
    }
    let mut id_counts: HashMap<String, usize> = HashMap::new();
    for id in documents.iter().filter_map(DocumentLine::id_field) {
        *id_counts.entry(id).or_default() += 1;
    }
    let ids_are_unique = id_counts.values().all(|&count| count == 1);
    Ok(documents
        .iter()
        .map(|document| document.metadata_id().or_else(|| document.id_field().filter(|_| ids_are_unique)))
        .collect())
}

/// A cluster: its base URL and an HTTP client with timeouts.
struct Cluster {
    client: reqwest::Client,
    base: Url,
    /// The URL as messages show it.
    shown: String,
}

/// A refused document of a bulk answer.
struct Refusal {
    line: usize,
    id: Option<String>,
    status: Option<u64>,
    reason: String,
}

impl Cluster {
    fn new(url: &str) -> Result<Cluster, String> {
        let shown = redact_urls(url).into_owned();
        let base = Url::parse(url)
            .map_err(|e| format!("`{shown}` is not a URL ({e}); write it as e.g. \"http://localhost:9200\""))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() || base.host().is_none() {
            return Err(format!(
                "`{shown}` is not an http(s) URL with a host; write it as e.g. \"http://localhost:9200\""
            ));
        }
        // reqwest sends the URL's userinfo as basic authentication.
        let client = net::client(net::ClientOptions {
            connect_timeout: CONNECT_TIMEOUT,
            timeout: Some(REQUEST_TIMEOUT),
            purpose: "the cluster's",
            ..Default::default()
        })?;
        Ok(Cluster { client, base, shown })
    }

    /// Creates and fills one index (or leaves it alone).
    async fn load(&self, index: &IndexToLoad, recreate: bool) -> Result<(), String> {
        let name = &index.folder.name;
        if recreate {
            self.delete(name).await?;
        }
        if !self.create(index, recreate).await? {
            return Ok(());
        }
        let mut refusals = Vec::new();
        for batch in batches(&index.documents) {
            refusals.extend(self.bulk(name, &index.documents[batch.clone()], &index.ids[batch]).await?);
        }
        if !refusals.is_empty() {
            return Err(refused(&refusals, index.documents.len(), &index.folder.documents_file()));
        }
        let (status, answer) = self.send(Method::POST, &[name, "_refresh"], None).await?;
        if !status.is_success() {
            return Err(status_error("POST", &format!("/{name}/_refresh"), status, &answer));
        }
        Ok(())
    }

    /// `DELETE /<index>`; an index that is not there is fine.
    async fn delete(&self, name: &str) -> Result<(), String> {
        let (status, answer) = self.send(Method::DELETE, &[name], None).await?;
        if status.is_success() || status == StatusCode::NOT_FOUND {
            Ok(())
        } else {
            Err(status_error("DELETE", &format!("/{name}"), status, &answer))
        }
    }

    /// `PUT /<index>` with its mappings: whether it was created (false: it
    /// existed, and is left alone).
    async fn create(&self, index: &IndexToLoad, recreate: bool) -> Result<bool, String> {
        let name = &index.folder.name;
        let body = (index.create_body.to_string().into_bytes(), "application/json");
        let (status, answer) = self.send(Method::PUT, &[name], Some(body)).await?;
        if status.is_success() {
            return Ok(true);
        }
        let (kind, reason) = error_of(&answer);
        if status == StatusCode::BAD_REQUEST && kind.as_deref() == Some("resource_already_exists_exception") {
            if recreate {
                return Err("it exists again right after it was deleted: is something else creating it? stop \
                            that, then load again"
                    .to_owned());
            }
            return Ok(false);
        }
        if let Some(kind) = kind.filter(|_| status.is_client_error()) {
            // The index's name is its folder's; anything else is in its mappings.
            let fix = if kind == "invalid_index_name_exception" {
                format!("rename the folder `{}` (lowercase, no spaces)", index.folder.dir.display())
            } else {
                format!("fix `{}`", index.folder.mappings_file().display())
            };
            let reason = reason.unwrap_or_default();
            return Err(format!("the cluster refused to create it ({} {kind}: {reason}); {fix}", status.as_u16()));
        }
        Err(status_error("PUT", &format!("/{name}"), status, &answer))
    }

    /// One `POST /_bulk` of `documents`: the documents it refused.
    async fn bulk(
        &self,
        name: &str,
        documents: &[DocumentLine],
        ids: &[Option<String>],
    ) -> Result<Vec<Refusal>, String> {
        let mut body = String::new();
        for (document, id) in documents.iter().zip(ids) {
            let action = match id {
                Some(id) => serde_json::json!({ "index": { "_index": name, "_id": id } }),
                None => serde_json::json!({ "index": { "_index": name } }),
            };
            body.push_str(&action.to_string());
            body.push('\n');
            body.push_str(&document.source());
            body.push('\n');
        }
        let (status, answer) =
            self.send(Method::POST, &["_bulk"], Some((body.into_bytes(), "application/x-ndjson"))).await?;
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            return Err(format!(
                "the cluster refused a bulk request of {} documents as too large (413); raise its \
                 `http.max_content_length`, or split `documents.ndjson` into several indices",
                documents.len()
            ));
        }
        if !status.is_success() {
            return Err(status_error("POST", "/_bulk", status, &answer));
        }
        let answer: Value = serde_json::from_slice(&answer).map_err(|e| {
            format!(
                "the cluster's answer to POST /_bulk is not JSON ({e}); is `{}` an OpenSearch or Elasticsearch URL?",
                self.shown
            )
        })?;
        if answer.get("errors").and_then(Value::as_bool) != Some(true) {
            return Ok(Vec::new());
        }
        let items = answer.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        if items.len() != documents.len() {
            return Err(format!(
                "the cluster's answer to POST /_bulk reports errors, but for {} items where {} documents were sent",
                items.len(),
                documents.len()
            ));
        }
        let refusals = documents
            .iter()
            .zip(ids)
            .zip(items)
            .filter_map(|((document, id), item)| {
                let outcome = item.as_object()?.values().next()?;
                let error = outcome.get("error")?;
                let reason =
                    match (error.get("type").and_then(Value::as_str), error.get("reason").and_then(Value::as_str)) {
                        (Some(kind), Some(reason)) => format!("{kind}: {reason}"),
                        _ => error.to_string(),
                    };
                let id = outcome.get("_id").and_then(Value::as_str).map(str::to_owned).or_else(|| id.clone());
                Some(Refusal { line: document.line, id, status: outcome.get("status").and_then(Value::as_u64), reason })
            })
            .collect();
        Ok(refusals)
    }

    /// Sends one request to `base/segments…` and reads its answer.
    async fn send(
        &self,
        method: Method,
        segments: &[&str],
        body: Option<(Vec<u8>, &'static str)>,
    ) -> Result<(StatusCode, Vec<u8>), String> {
        let mut url = self.base.clone();
        url.path_segments_mut().expect("checked in Cluster::new: a base URL").pop_if_empty().extend(segments);
        let what = format!("{method} /{}", segments.join("/"));
        let mut request = self.client.request(method, url);
        if let Some((bytes, content_type)) = body {
            request = request.header(CONTENT_TYPE, content_type).body(bytes);
        }
        let response = request.send().await.map_err(|e| self.unreachable(&what, &e))?;
        let status = response.status();
        let answer = read_capped(response).await.map_err(|e| self.unreachable(&what, &e))?;
        Ok((status, answer))
    }

    /// The error of a request that got no (whole) answer.
    fn unreachable(&self, what: &str, error: &reqwest::Error) -> String {
        let mut chain = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !chain.contains(&text) {
                chain = format!("{chain}: {text}");
            }
            source = cause.source();
        }
        let chain = redact_urls(&chain);
        if error.is_timeout() {
            format!(
                "{what} got no answer within {}s ({chain}); check that the cluster is healthy",
                REQUEST_TIMEOUT.as_secs()
            )
        } else if error.is_connect() {
            format!(
                "{what} could not connect ({chain}); is OpenSearch running at `{}`? check `[setup] opensearch.url`",
                self.shown
            )
        } else {
            format!("{what} failed ({chain}); check `[setup] opensearch.url` and the cluster")
        }
    }
}

/// The ranges of documents each `_bulk` request carries.
fn batches(documents: &[DocumentLine]) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, document) in documents.iter().enumerate() {
        // The action line is under 200 bytes for any sane index name and id.
        let size = document.text.len() + 200;
        if i > start && (i - start == BATCH_DOCUMENTS || bytes + size > BATCH_BYTES) {
            batches.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < documents.len() {
        batches.push(start..documents.len());
    }
    batches
}

/// At most [`ANSWER_CAP`] bytes of an answer.
async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, reqwest::Error> {
    let mut answer = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = ANSWER_CAP - answer.len();
        answer.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if answer.len() == ANSWER_CAP {
            break;
        }
    }
    Ok(answer)
}

/// The `error.type` and `error.reason` of an OpenSearch error answer.
fn error_of(answer: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_slice::<Value>(answer) else { return (None, None) };
    let text = |key: &str| value.get("error").and_then(|e| e.get(key)).and_then(Value::as_str).map(str::to_owned);
    (text("type"), text("reason"))
}

/// The error of an answer whose status is not a success, with the start of
/// its body.
fn status_error(method: &str, path: &str, status: StatusCode, answer: &[u8]) -> String {
    let preview: String = String::from_utf8_lossy(answer).chars().take(300).collect();
    let preview = redact_urls(preview.trim()).into_owned();
    let shown = if preview.is_empty() { String::new() } else { format!(": {preview}") };
    let fix = if status.is_server_error() {
        "check the cluster's health and logs, then load again"
    } else if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        "put a user allowed to create indices into `[setup] opensearch.url` (http://USER:PASSWORD@host:9200)"
    } else {
        "check that `[setup] opensearch.url` is an OpenSearch or Elasticsearch cluster"
    };
    format!("the cluster answered {status} to {method} {path}{shown}; {fix}")
}

/// The error of an index some of whose documents the cluster refused.
fn refused(refusals: &[Refusal], sent: usize, file: &Path) -> String {
    let mut listed: Vec<String> = refusals
        .iter()
        .take(LISTED_FAILURES)
        .map(|r| {
            let id = r.id.as_ref().map(|id| format!(" (`_id` `{id}`)")).unwrap_or_default();
            let status = r.status.map(|s| format!("{s} ")).unwrap_or_default();
            format!("`{}:{}`{id}: {status}{}", file.display(), r.line, r.reason)
        })
        .collect();
    if refusals.len() > LISTED_FAILURES {
        listed.push(format!("and {} more", refusals.len() - LISTED_FAILURES));
    }
    format!(
        "the cluster refused {} of its {sent} documents: {}; fix those lines (or the index's mappings), then load \
         again with `recreate = true`",
        refusals.len(),
        listed.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(line: usize, text: &str) -> DocumentLine {
        let Value::Object(fields) = serde_json::from_str(text).unwrap() else { panic!("{text}") };
        DocumentLine { line, text: text.to_owned(), fields }
    }

    #[test]
    fn batches_hold_at_most_a_thousand_documents_or_five_mib() {
        let small: Vec<DocumentLine> = (0..2_500).map(|i| document(i + 1, "{\"n\":1}")).collect();
        assert_eq!(batches(&small), [0..1_000, 1_000..2_000, 2_000..2_500]);
        let big = format!("{{\"text\":\"{}\"}}", "x".repeat(2 << 20));
        let large: Vec<DocumentLine> = (0..5).map(|i| document(i + 1, &big)).collect();
        assert_eq!(batches(&large), [0..2, 2..4, 4..5]);
        let huge = format!("{{\"text\":\"{}\"}}", "x".repeat(6 << 20));
        let alone = vec![document(1, "{}"), document(2, &huge), document(3, "{}")];
        assert_eq!(batches(&alone), [0..1, 1..2, 2..3]);
        assert!(batches(&[]).is_empty());
    }

    #[test]
    fn ids_come_from_id_fields_only_when_they_are_unique() {
        let file = Path::new("documents.ndjson");
        let unique = [
            document(1, r#"{"id":"a"}"#),
            document(2, r#"{"id":7}"#),
            document(3, r#"{"_id":"z","id":"q"}"#),
            document(4, "{}"),
        ];
        assert_eq!(bulk_ids(&unique, file).unwrap(), [Some("a".into()), Some("7".into()), Some("z".into()), None]);
        let shared = [document(1, r#"{"id":1}"#), document(2, r#"{"id":1}"#), document(3, r#"{"_id":"m"}"#)];
        assert_eq!(bulk_ids(&shared, file).unwrap(), [None, None, Some("m".into())]);
        let twice = [document(4, r#"{"_id":"m"}"#), document(9, r#"{"_id":"m"}"#)];
        assert_eq!(
            bulk_ids(&twice, file).unwrap_err(),
            "read `documents.ndjson:9`: its `_id` `m` is the `_id` of line 4 too, and would replace that document; \
             give each document its own `_id`"
        );
    }

    #[test]
    fn a_url_that_is_not_an_http_base_is_refused_without_its_password() {
        let error = Cluster::new("ftp://user:s3cret@host/").err().unwrap();
        assert_eq!(
            error,
            "`ftp://[redacted]@host/` is not an http(s) URL with a host; write it as e.g. \"http://localhost:9200\""
        );
        assert!(Cluster::new("localhost:9200").err().unwrap().contains("is not"));
    }
}
