//! `assay serve`: the project as an HTTP API, for tools that embed assay
//! from another language and for promptfoo suites that call its matchers.
//!
//! - `POST /v1/check`: a batch of checks → verdicts, as `assay check`
//!   (`check.rs`);
//! - `POST /v1/promptfoo/webhook`: one check in promptfoo's `webhook`
//!   assertion's shape (`check.rs`);
//! - `POST /v1/runs`, `GET /v1/runs/{id}`, `GET /v1/runs/{id}/events`,
//!   `DELETE /v1/runs/{id}`: runs of cases, inline or under the served
//!   root, in the background, with their event stream as server-sent
//!   events, bounded in time and in what they keep (`runs.rs`);
//! - `GET /v1/plugins`: the loaded plugins and their keys;
//! - `GET /v1/openapi.json`: the OpenAPI 3.1 document of all of them
//!   (`openapi.json`, checked against the router by a test).
//!
//! The project's registry is loaded once, when the server starts, and
//! shared by every request; guest calls are blocking, so they run on
//! tokio's blocking threads, never on the runtime's, each within the
//! plugin's deadline. Runs run on threads of their own, at most
//! [`ServeOptions::max_runs`] at once, writing a results directory each.
//!
//! The server is bound to 127.0.0.1 unless told otherwise, and refuses to
//! start beyond loopback without a bearer token (`auth.rs`). Before
//! anything else, a request from a browser page of another origin, one for
//! a host name that is not loopback's (DNS rebinding), and a `POST` that is
//! not JSON are refused (`origin.rs`). Connections
//! are accepted as `assay agent serve` accepts them (a connection cap,
//! header read timeouts, accept errors survived); each request is bounded
//! in body size, time and concurrency (`limits.rs`). Every error is JSON,
//! `{"error": "..."}`, a fragment that reads after "failed to".

mod auth;
mod body;
mod check;
mod error;
mod limits;
mod origin;
mod runs;

pub use auth::Token;

use crate::project::Project;
use crate::agent::serve::{ConnectionLimits, serve_connections};
use crate::errors::ServeError;
use crate::plugin::Registry;
use crate::report::Redactor;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::handler::Handler;
use axum::http::{Method, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, on};
use error::ApiError;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// The OpenAPI document of every endpoint, served as it is.
const OPENAPI: &str = include_str!("openapi.json");

/// How a server is set up: plain data, every field with a default.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The address to listen on (default 127.0.0.1:7878; port 0 picks a
    /// free one).
    pub bind: SocketAddr,
    /// The bearer token every request but the OpenAPI document's must
    /// carry; required when `bind` is beyond loopback.
    pub token: Option<Token>,
    /// The directory `POST /v1/runs` may name case paths under (default:
    /// the current directory).
    pub root: PathBuf,
    /// Where each run's results directory goes, as `DIR/<id>` (default
    /// `<root>/.assay/serve-runs`).
    pub results: Option<PathBuf>,
    /// The largest request body, in bytes (default 8 MiB).
    pub max_body_bytes: usize,
    /// How long a request may take until its answer starts (default 30 s);
    /// an event stream goes on after that.
    pub request_timeout: Duration,
    /// The most requests handled at once (default 256); the next ones wait
    /// their turn within their timeout.
    pub max_requests: usize,
    /// The most runs at once (default 4); another is refused (429) until
    /// one ends.
    pub max_runs: usize,
    /// The most samples one run may have in flight (default: as `assay
    /// run`'s `--jobs`, CPUs × 4); a run asking more is refused.
    pub max_jobs: usize,
    /// How long a run may take (default 1 hour); it is then stopped.
    pub run_timeout: Duration,
    /// How many finished runs keep their results directory (default 100);
    /// older ones are removed.
    pub keep_runs: usize,
    /// The most connections held at once (default 1024).
    pub max_connections: usize,
    /// How long a request's head may take to arrive, and then its body
    /// (default 10 s each).
    pub read_timeout: Duration,
    /// Web page origins allowed to call the server from a browser besides
    /// its own (`--allow-origin`; see `origin.rs`).
    pub allowed_origins: Vec<String>,
}

/// The port `assay serve` listens on by default.
pub const DEFAULT_PORT: u16 = 7878;

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), DEFAULT_PORT),
            token: None,
            root: PathBuf::from("."),
            results: None,
            max_body_bytes: 8 << 20,
            request_timeout: Duration::from_secs(30),
            max_requests: 256,
            max_runs: 4,
            max_jobs: crate::run::RunOptions::default().jobs,
            run_timeout: Duration::from_secs(3600),
            keep_runs: 100,
            max_connections: 1024,
            read_timeout: Duration::from_secs(10),
            allowed_origins: Vec::new(),
        }
    }
}

/// What every handler shares.
struct Shared {
    project: Arc<Project>,
    registry: Arc<Registry>,
    redactor: Redactor,
    runs: runs::Runs,
}

/// The state handlers get.
type AppState = Arc<Shared>;

/// A server bound to its address, ready to serve.
pub struct Server {
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("address", &self.listener.local_addr().ok()).finish_non_exhaustive()
    }
}

impl Server {
    /// Checks the options, loads the project's plugins and binds the
    /// address. Must be called within a tokio runtime.
    pub async fn bind(project: Arc<Project>, options: ServeOptions) -> Result<Server, ServeError> {
        if !options.bind.ip().is_loopback() && options.token.is_none() {
            return Err(ServeError::NoToken { bind: options.bind });
        }
        for (setting, value) in [
            ("--max-requests", options.max_requests),
            ("--max-runs", options.max_runs),
            ("--jobs", options.max_jobs),
            ("--keep-runs", options.keep_runs),
            ("--max-connections", options.max_connections),
            ("--max-body-mb", options.max_body_bytes),
        ] {
            if value == 0 {
                let message = "0 would serve nothing: use at least 1".to_owned();
                return Err(ServeError::Limit { setting, value: "0".into(), message });
            }
        }
        let root = std::fs::canonicalize(&options.root)
            .map_err(|e| ServeError::Root { path: options.root.clone(), message: e.to_string() })?;
        if !root.is_dir() {
            return Err(ServeError::Root { path: options.root.clone(), message: "it is not a directory".into() });
        }
        let results = options.results.clone().unwrap_or_else(|| root.join(".assay").join("serve-runs"));
        if options.run_timeout.is_zero() {
            let message = "0 would stop every run at once: use a positive number of seconds".to_owned();
            return Err(ServeError::Limit { setting: "--run-timeout", value: "0".into(), message });
        }
        let registry = project.registry()?;
        let limits = runs::RunLimits {
            max_runs: options.max_runs,
            max_jobs: options.max_jobs,
            run_timeout: options.run_timeout,
            keep_runs: options.keep_runs,
        };
        let shared = Arc::new(Shared {
            // Clients see paths relative to the root, not where it is.
            redactor: project.redactor().hiding_folder(&root),
            runs: runs::Runs::new(root, results, limits),
            registry,
            project,
        });
        let router = router(shared, &options);
        let listener = TcpListener::bind(options.bind)
            .await
            .map_err(|e| ServeError::Listen { bind: options.bind, message: e.to_string() })?;
        let limits = ConnectionLimits { max_connections: options.max_connections, read_timeout: options.read_timeout };
        Ok(Server { listener, router, limits })
    }

    /// The address it listens on (with the port picked, when 0 was asked).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until the task is dropped.
    pub async fn run(self) -> std::convert::Infallible {
        let service = hyper_util::service::TowerToHyperService::new(self.router);
        serve_connections(self.listener, None, self.limits, "assay serve", service).await
    }
}

/// The routes, as they are registered, so that a test can hold the OpenAPI
/// document to them: `(method, path)`.
struct Routes {
    router: Router<AppState>,
    listed: Vec<(Method, &'static str)>,
}

impl Routes {
    /// `handler` for `method` on `path`, listed.
    fn add<H: Handler<T, AppState>, T: 'static>(mut self, method: Method, path: &'static str, handler: H) -> Routes {
        let filter = MethodFilter::try_from(method.clone()).expect("a method axum routes");
        self.router = self.router.route(path, on(filter, handler));
        self.listed.push((method, path));
        self
    }
}

/// Every endpoint, in the order the OpenAPI document lists them.
fn routes() -> Routes {
    Routes { router: Router::new(), listed: Vec::new() }
        .add(Method::POST, "/v1/check", check::check)
        .add(Method::POST, "/v1/promptfoo/webhook", check::promptfoo_webhook)
        .add(Method::POST, "/v1/runs", runs::start)
        .add(Method::GET, "/v1/runs/{id}", runs::status)
        .add(Method::DELETE, "/v1/runs/{id}", runs::stop)
        .add(Method::GET, "/v1/runs/{id}/events", runs::events)
        .add(Method::GET, "/v1/plugins", plugins)
        .add(Method::GET, "/v1/openapi.json", openapi)
}

/// The router: the routes, an error for any other path, and the limits and
/// the token check around every request (the outermost layer runs first).
fn router(shared: AppState, options: &ServeOptions) -> Router {
    let limits = limits::RequestLimits::new(
        options.request_timeout,
        options.read_timeout,
        options.max_requests,
        options.max_body_bytes,
    );
    let token = options.token.clone().map(Arc::new);
    let origins = origin::OriginPolicy::new(options.bind.ip().is_loopback(), &options.allowed_origins);
    let redactor = shared.redactor.clone();
    routes()
        .router
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(redactor, error::redact_errors))
        .layer(axum::middleware::from_fn_with_state(limits, limits::bound))
        .layer(axum::middleware::from_fn_with_state(origins, origin::check))
        .layer(axum::middleware::from_fn_with_state(token, auth::require_token))
        .layer(DefaultBodyLimit::max(options.max_body_bytes))
        .with_state(shared)
}

async fn not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!(
        "find {method} {}: assay serve has no such endpoint (GET /v1/openapi.json lists them)",
        uri.path()
    ))
}

/// `GET /v1/openapi.json`.
async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

/// `GET /v1/plugins`: each plugin with its label, version, source, sha256
/// and keys, and which key `[keys]` gives to another plugin.
async fn plugins(State(shared): State<AppState>) -> Result<Response, ApiError> {
    let registry = &shared.registry;
    let plugins: Vec<serde_json::Value> = registry
        .labelled()
        .map(|(label, plugin)| {
            let keys: Vec<serde_json::Value> = plugin
                .keys()
                .iter()
                .map(|key| {
                    let shadowed_by = registry.label_for(&key.key).filter(|winner| *winner != label);
                    serde_json::json!({ "key": key.key, "summary": key.summary, "shadowed_by": shadowed_by })
                })
                .collect();
            serde_json::json!({
                "label": label,
                "name": plugin.name(),
                "version": plugin.version(),
                "source": plugin.source().to_string(),
                "sha256": plugin.sha256(),
                "keys": keys,
            })
        })
        .collect();
    error::json_response(&shared.redactor, &serde_json::json!({ "plugins": plugins }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The OpenAPI document's `(method, path)` pairs.
    fn documented() -> Vec<(Method, String)> {
        let document: serde_json::Value = serde_json::from_str(OPENAPI).expect("openapi.json is JSON");
        assert_eq!(document["openapi"], "3.1.0");
        let mut found = Vec::new();
        for (path, item) in document["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("a path item").keys() {
                found.push((method.to_uppercase().parse().expect("a method"), path.clone()));
            }
        }
        found
    }

    #[test]
    fn every_route_is_documented_and_every_documented_route_exists() {
        let mut routed: Vec<(Method, String)> =
            routes().listed.into_iter().map(|(method, path)| (method, path.to_owned())).collect();
        let mut documented = documented();
        let key = |pair: &(Method, String)| (pair.1.clone(), pair.0.to_string());
        routed.sort_by_key(key);
        documented.sort_by_key(key);
        assert_eq!(routed, documented);
    }

    #[test]
    fn every_documented_operation_has_an_id_and_answers() {
        let document: serde_json::Value = serde_json::from_str(OPENAPI).unwrap();
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                assert!(operation["operationId"].is_string(), "{method} {path} has no operationId");
                assert!(operation["responses"].is_object(), "{method} {path} has no responses");
            }
        }
    }
}
