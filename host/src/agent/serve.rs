//! `assay agent serve`: agent components served over neuro-san's HTTP
//! protocol on 127.0.0.1, so the same test files run over `http`/`https`
//! with no Python anywhere, and teams get a mock neuro-san server for CI.
//!
//! Endpoints: `GET /api/v1/list`, `GET /api/v1/{agent}/function`,
//! `POST /api/v1/{agent}/streaming_chat` (answered as JSON lines). Request
//! headers other than the standard ones become the request's metadata. A
//! latency can be added to every chat answer, to stand in for a model.

use crate::agent::component::{AgentCallError, AgentComponent};
use crate::agent::message::{ChatRequest, StreamLine};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

/// The largest request body accepted.
const MAX_REQUEST_BYTES: usize = 16 << 20;

/// Headers that are transport, not metadata.
const TRANSPORT_HEADERS: &[&str] = &[
    "host",
    "content-type",
    "content-length",
    "accept",
    "accept-encoding",
    "user-agent",
    "connection",
    "transfer-encoding",
];

/// The agents one server answers for, by the name in the URL.
pub type ServedAgents = BTreeMap<String, Arc<AgentComponent>>;

/// Serves `agents` on `listener` until the task is dropped, over TLS when
/// `tls` is given, answering each chat after `latency`. Each connection is
/// handled on its own task.
pub async fn serve(
    listener: TcpListener,
    agents: ServedAgents,
    tls: Option<TlsAcceptor>,
    latency: std::time::Duration,
) -> std::io::Result<()> {
    let agents = Arc::new(agents);
    loop {
        let (stream, _) = listener.accept().await?;
        let agents = agents.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| handle(agents.clone(), request, latency));
            // A client that goes away mid-request is its own problem.
            let _ = match tls {
                None => http1::Builder::new().serve_connection(TokioIo::new(stream), service).await,
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(stream) => http1::Builder::new().serve_connection(TokioIo::new(stream), service).await,
                    Err(_) => return,
                },
            };
        });
    }
}

/// A TLS acceptor from a PEM certificate chain and a PEM private key.
pub fn tls_acceptor(certificate: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_file_iter(certificate)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read the certificate `{}`: {e}", certificate.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("cannot read the key `{}`: {e}", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("the certificate and key do not make a TLS identity: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

async fn handle(
    agents: Arc<ServedAgents>,
    request: Request<Incoming>,
    latency: std::time::Duration,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = request.uri().path().trim_end_matches('/').to_owned();
    let segments: Vec<&str> = path.split('/').collect();
    let response = match (request.method(), segments.as_slice()) {
        (&Method::GET, ["", "api", "v1", "list"]) => {
            let list: Vec<Value> = agents
                .iter()
                .map(|(name, agent)| json!({ "agent_name": name, "description": agent.description() }))
                .collect();
            json_response(StatusCode::OK, &json!({ "agents": list }))
        }
        (&Method::GET, ["", "api", "v1", name, "function"]) => match agents.get(*name) {
            Some(agent) => {
                json_response(StatusCode::OK, &json!({ "function": { "description": agent.description() } }))
            }
            None => unknown_agent(name, &agents),
        },
        (&Method::POST, ["", "api", "v1", name, "streaming_chat"]) => match agents.get(*name) {
            Some(agent) => {
                let (name, agent) = (name.to_string(), agent.clone());
                tokio::time::sleep(latency).await;
                return Ok(streaming_chat(name, agent, request).await);
            }
            None => unknown_agent(name, &agents),
        },
        _ => json_response(StatusCode::NOT_FOUND, &json!({ "error": format!("no endpoint {path}") })),
    };
    Ok(response)
}

async fn streaming_chat(name: String, agent: Arc<AgentComponent>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let metadata: Vec<(String, String)> = request
        .headers()
        .iter()
        .filter(|(header, _)| !TRANSPORT_HEADERS.contains(&header.as_str()))
        .filter_map(|(header, value)| Some((header.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect();
    let body = match Limited::new(request.into_body(), MAX_REQUEST_BYTES).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => return error_response(StatusCode::BAD_REQUEST, format!("cannot read the request body: {e}")),
    };
    let body: Value = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, format!("the request body is not JSON: {e}")),
    };
    let chat_request = match ChatRequest::from_wire(&name, &body, metadata) {
        Ok(request) => request,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, e),
    };
    let answer = tokio::task::spawn_blocking(move || agent.chat(&chat_request, None)).await;
    match answer {
        Ok(Ok(messages)) => {
            let mut lines = String::new();
            for message in messages {
                let line = serde_json::to_string(&StreamLine { response: message }).expect("messages serialize");
                lines.push_str(&line);
                lines.push('\n');
            }
            Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "application/json-lines")
                .body(Full::new(Bytes::from(lines)))
                .expect("a valid response")
        }
        Ok(Err(AgentCallError::Refused(message))) => error_response(StatusCode::INTERNAL_SERVER_ERROR, message),
        Ok(Err(AgentCallError::Fault(fault))) => {
            error_response(StatusCode::INTERNAL_SERVER_ERROR, format!("the agent component {fault}"))
        }
        Err(e) => error_response(StatusCode::INTERNAL_SERVER_ERROR, format!("the agent call panicked: {e}")),
    }
}

fn unknown_agent(name: &str, agents: &ServedAgents) -> Response<Full<Bytes>> {
    let known: Vec<&str> = agents.keys().map(String::as_str).collect();
    error_response(StatusCode::NOT_FOUND, format!("no agent `{name}` here; this server has {}", known.join(", ")))
}

fn error_response(status: StatusCode, message: String) -> Response<Full<Bytes>> {
    json_response(status, &json!({ "error": message }))
}

fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid response")
}
