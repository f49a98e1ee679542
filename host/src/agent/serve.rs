//! `assay agent serve`: agent components served over neuro-san's HTTP
//! protocol on 127.0.0.1, so the same test files run over `http`/`https`
//! with no Python anywhere, and teams get a mock neuro-san server for CI;
//! or over OpenAI's chat completions ([`Protocol::OpenAi`],
//! `serve_openai.rs`), a mock for `openai` connections.
//!
//! neuro-san's endpoints: `GET /api/v1/list`, `GET /api/v1/{agent}/function`,
//! `POST /api/v1/{agent}/streaming_chat` (answered as JSON lines). Request
//! headers other than the standard ones become the request's metadata. A
//! latency can be added to every chat answer, to stand in for a model.
//!
//! The server outlives its clients' misbehaviour ([`ServeOptions`]): a
//! failed `accept()` (out of file descriptors, say) is logged and retried
//! after a short pause, never the end of the server; a request's head, its
//! body and a TLS handshake must each arrive within the read timeout (so a
//! connection sending nothing, or half a header, is closed); bodies are
//! capped at 16 MiB; and at most `max_connections` connections are served at
//! once, the next ones waiting in the kernel's backlog until one closes.

use crate::agent::component::{AgentCallError, AgentComponent};
use crate::agent::message::{ChatMessage, ChatRequest, StreamLine};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
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

/// The protocol a server speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// neuro-san's HTTP protocol (the default).
    #[default]
    NeuroSan,
    /// OpenAI's chat completions under `/v1`: `POST /v1/chat/completions`
    /// (the request's `model` names the agent) and `GET /v1/models`.
    OpenAi,
}

/// How a server treats its clients.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The protocol it speaks (default neuro-san's).
    pub protocol: Protocol,
    /// Added before every chat answer, to stand in for a model (default 0).
    pub latency: Duration,
    /// How long a request's head may take to arrive, then its body, and a
    /// TLS handshake (default 10 s); a connection idle between requests is
    /// closed after it too.
    pub read_timeout: Duration,
    /// The most connections served at once (default 1024); the next ones
    /// wait, unaccepted, until one closes.
    pub max_connections: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            protocol: Protocol::NeuroSan,
            latency: Duration::ZERO,
            read_timeout: Duration::from_secs(10),
            max_connections: 1024,
        }
    }
}

/// The pause after a failed `accept()`, doubled after each failure in a
/// row up to [`MAX_ACCEPT_PAUSE`]: long enough not to spin while out of
/// file descriptors, short enough to recover at once when they free up.
const FIRST_ACCEPT_PAUSE: Duration = Duration::from_millis(10);
const MAX_ACCEPT_PAUSE: Duration = Duration::from_secs(1);

/// Serves `agents` on `listener` until the task is dropped, over TLS when
/// `tls` is given. Each connection is handled on its own task; accept
/// errors are logged to stderr (the first of a run of them, and the
/// recovery) and retried, so the server never ends by itself.
pub async fn serve(
    listener: TcpListener,
    agents: ServedAgents,
    tls: Option<TlsAcceptor>,
    options: ServeOptions,
) -> std::convert::Infallible {
    let agents = Arc::new(agents);
    let options = Arc::new(options);
    let slots = Arc::new(tokio::sync::Semaphore::new(options.max_connections.max(1)));
    let mut failures = 0u32;
    let mut pause = FIRST_ACCEPT_PAUSE;
    loop {
        let slot = slots.clone().acquire_owned().await.expect("the semaphore is never closed");
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                if failures == 0 {
                    eprintln!("assay agent serve: cannot accept a connection: {error}; retrying");
                }
                failures += 1;
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_ACCEPT_PAUSE);
                continue;
            }
        };
        if failures > 0 {
            eprintln!("assay agent serve: accepting connections again, after {failures} failed attempts");
            (failures, pause) = (0, FIRST_ACCEPT_PAUSE);
        }
        let (agents, options, tls) = (agents.clone(), options.clone(), tls.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let mut http = http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(options.read_timeout);
            let read_timeout = options.read_timeout;
            let service = service_fn(move |request| handle(agents.clone(), request, options.clone()));
            // A client that goes away mid-request is its own problem.
            let _ = match tls {
                None => http.serve_connection(TokioIo::new(stream), service).await,
                Some(acceptor) => match tokio::time::timeout(read_timeout, acceptor.accept(stream)).await {
                    Ok(Ok(stream)) => http.serve_connection(TokioIo::new(stream), service).await,
                    Ok(Err(_)) | Err(_) => return,
                },
            };
        });
    }
}

/// Raises this process's soft limit on open files to its hard limit, so
/// that a server's connection cap, not the (often 1024) default, bounds
/// how many clients it holds: the new soft limit. Unix only.
#[cfg(unix)]
pub fn raise_open_file_limit() -> std::io::Result<libc::rlim_t> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            limit = raised;
        }
    }
    Ok(limit.rlim_cur)
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
    options: Arc<ServeOptions>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if options.protocol == Protocol::OpenAi {
        return Ok(crate::agent::serve_openai::handle(&agents, request, &options).await);
    }
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
                tokio::time::sleep(options.latency).await;
                return Ok(streaming_chat(name, agent, request, options.read_timeout).await);
            }
            None => unknown_agent(name, &agents),
        },
        _ => json_response(StatusCode::NOT_FOUND, &json!({ "error": format!("no endpoint {path}") })),
    };
    Ok(response)
}

async fn streaming_chat(
    name: String,
    agent: Arc<AgentComponent>,
    request: Request<Incoming>,
    read_timeout: Duration,
) -> Response<Full<Bytes>> {
    let metadata = metadata(&request);
    let body = match json_body(request, read_timeout).await {
        Ok(body) => body,
        Err((status, message)) => return error_response(status, message),
    };
    let chat_request = match ChatRequest::from_wire(&name, &body, metadata) {
        Ok(request) => request,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, e),
    };
    match answer(agent, chat_request).await {
        Ok(messages) => {
            let mut lines = String::new();
            for message in messages {
                let line = serde_json::to_string(&StreamLine { response: message }).expect("messages serialize");
                lines.push_str(&line);
                lines.push('\n');
            }
            respond(StatusCode::OK, "application/json-lines", lines)
        }
        Err(message) => error_response(StatusCode::INTERNAL_SERVER_ERROR, message),
    }
}

/// A request's headers, other than the standard ones: its metadata.
pub(super) fn metadata(request: &Request<Incoming>) -> Vec<(String, String)> {
    request
        .headers()
        .iter()
        .filter(|(header, _)| !TRANSPORT_HEADERS.contains(&header.as_str()))
        .filter_map(|(header, value)| Some((header.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect()
}

/// A request's JSON body, read within the read timeout and the size cap;
/// or the status and message to answer instead.
pub(super) async fn json_body(
    request: Request<Incoming>,
    read_timeout: Duration,
) -> Result<Value, (StatusCode, String)> {
    let body = match tokio::time::timeout(read_timeout, Limited::new(request.into_body(), MAX_REQUEST_BYTES).collect())
        .await
    {
        Ok(Ok(body)) => body.to_bytes(),
        Ok(Err(e)) => return Err((StatusCode::BAD_REQUEST, format!("cannot read the request body: {e}"))),
        Err(_) => {
            let late = format!("the request body did not arrive within {} s", read_timeout.as_secs_f64());
            return Err((StatusCode::REQUEST_TIMEOUT, late));
        }
    };
    serde_json::from_slice(&body).map_err(|e| (StatusCode::BAD_REQUEST, format!("the request body is not JSON: {e}")))
}

/// The agent's answer to one request, on a blocking thread; or what went
/// wrong, to answer as a server error.
pub(super) async fn answer(agent: Arc<AgentComponent>, request: ChatRequest) -> Result<Vec<ChatMessage>, String> {
    match tokio::task::spawn_blocking(move || agent.chat(&request, None)).await {
        Ok(Ok(messages)) => Ok(messages),
        Ok(Err(AgentCallError::Refused(message))) => Err(message),
        Ok(Err(AgentCallError::Fault(fault))) => Err(format!("the agent component {fault}")),
        Err(e) => Err(format!("the agent call panicked: {e}")),
    }
}

/// A response with a status, a content type and a body.
pub(super) fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(body.into()))
        .expect("a valid response")
}

fn unknown_agent(name: &str, agents: &ServedAgents) -> Response<Full<Bytes>> {
    let known: Vec<&str> = agents.keys().map(String::as_str).collect();
    error_response(StatusCode::NOT_FOUND, format!("no agent `{name}` here; this server has {}", known.join(", ")))
}

fn error_response(status: StatusCode, message: String) -> Response<Full<Bytes>> {
    json_response(status, &json!({ "error": message }))
}

fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    respond(status, "application/json", body.to_string())
}
