//! The server: accepting connections within the connection cap, TLS, and
//! handing each request to its protocol.

use crate::agent::serve::options::{Protocol, ServeOptions, ServedAgents};
use crate::agent::serve::{neuro_san, openai};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

/// The pause after a failed `accept()`, doubled after each failure in a
/// row up to [`MAX_ACCEPT_PAUSE`]: long enough not to spin while out of
/// file descriptors, short enough to recover at once when they free up.
const FIRST_ACCEPT_PAUSE: Duration = Duration::from_millis(10);
const MAX_ACCEPT_PAUSE: Duration = Duration::from_secs(1);

/// Serves `agents` on `listener` until the task is dropped, over TLS when
/// `tls` is given (see [`serve_connections`]).
pub async fn serve(
    listener: TcpListener,
    agents: ServedAgents,
    tls: Option<TlsAcceptor>,
    options: ServeOptions,
) -> std::convert::Infallible {
    let agents = Arc::new(agents);
    let options = Arc::new(options);
    let limits = ConnectionLimits { max_connections: options.max_connections, read_timeout: options.read_timeout };
    let service = service_fn(move |request| handle(agents.clone(), request, options.clone()));
    serve_connections(listener, tls, limits, "assay agent serve", service).await
}

/// How a server bounds its connections.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// The most connections served at once; the next ones wait, unaccepted,
    /// in the kernel's backlog until one closes.
    pub max_connections: usize,
    /// How long a request's head and a TLS handshake may take to arrive.
    pub read_timeout: Duration,
}

/// Serves HTTP/1.1 on `listener` with `service` until the task is dropped,
/// over TLS when `tls` is given: each connection on its own task, at most
/// `limits.max_connections` at once. Accept errors (out of file
/// descriptors, say) are logged to stderr as `who: ...` (the first of a run
/// of them, and the recovery) and retried after a pause, so the server
/// never ends by itself. `assay agent serve` and `assay serve` share it.
pub async fn serve_connections<S, B>(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    limits: ConnectionLimits,
    who: &'static str,
    service: S,
) -> std::convert::Infallible
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let mut failures = 0u32;
    let mut pause = FIRST_ACCEPT_PAUSE;
    loop {
        let slot = slots.clone().acquire_owned().await.expect("the semaphore is never closed");
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                if failures == 0 {
                    eprintln!("{who}: cannot accept a connection: {error}; retrying");
                }
                failures += 1;
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_ACCEPT_PAUSE);
                continue;
            }
        };
        if failures > 0 {
            eprintln!("{who}: accepting connections again, after {failures} failed attempts");
            (failures, pause) = (0, FIRST_ACCEPT_PAUSE);
        }
        // Small answers go out at once, not after Nagle's delay.
        let _ = stream.set_nodelay(true);
        let (service, tls) = (service.clone(), tls.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let mut http = http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(limits.read_timeout);
            // A client that goes away mid-request is its own problem.
            let _ = match tls {
                None => http.serve_connection(TokioIo::new(stream), service).await,
                Some(acceptor) => match tokio::time::timeout(limits.read_timeout, acceptor.accept(stream)).await {
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
    Ok(match options.protocol {
        Protocol::NeuroSan => neuro_san::handle(&agents, request, &options).await,
        Protocol::OpenAi => openai::handle(&agents, request, &options).await,
    })
}
