//! `assay serve`: the flags as [`ServeOptions`], the token from its file or
//! ASSAY_SERVE_TOKEN, then the library's server; prints the address.

use super::CliError;
use super::args::ServeApiArgs;
use super::options::seconds;
use assay::serve::{ServeOptions, Server, Token};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The variable the token may come from.
const TOKEN_VAR: &str = "ASSAY_SERVE_TOKEN";

pub fn run(args: ServeApiArgs) -> anyhow::Result<u8> {
    let bind = match (args.bind.parse::<SocketAddr>(), args.bind.parse::<IpAddr>()) {
        (Ok(address), _) => address,
        (_, Ok(ip)) => SocketAddr::new(ip, args.port),
        _ => {
            let message = format!("`{}` is not an IP address or IP:PORT, e.g. 127.0.0.1 or 0.0.0.0:7878", args.bind);
            return Err(CliError::Flag { flag: "--bind", message }.into());
        }
    };
    let token = match (&args.token_file, std::env::var(TOKEN_VAR)) {
        (Some(file), _) => Some(Token::read(file)),
        (None, Ok(text)) if !text.is_empty() => Some(Token::new(&text, TOKEN_VAR)),
        (None, _) => None,
    }
    .transpose()
    .map_err(CliError::from)?;
    let options = ServeOptions {
        bind,
        token,
        root: args.root,
        results: args.results,
        max_body_bytes: args.max_body_mb.saturating_mul(1 << 20),
        request_timeout: seconds(args.request_timeout, "--request-timeout")?,
        max_requests: args.max_requests,
        max_runs: args.max_runs,
        max_connections: args.max_connections,
        read_timeout: seconds(args.read_timeout, "--read-timeout")?,
        allowed_origins: args.allow_origins,
    };
    // A server's clients are not its user: it trusts no file (not even
    // `[trust] commands`, nor ASSAY_ALLOW_COMMANDS) unless told so here.
    let mut project_options = super::project::options(&args.project, Some(&args.case_env), Some(&args.server));
    project_options.trusted_files = match args.case_env.allow_commands {
        true => assay::TrustedFiles::Everything,
        false => assay::TrustedFiles::Nothing,
    };
    let project = Arc::new(assay::Project::open(project_options)?);
    // Each connection holds a file descriptor: see `assay agent serve`.
    #[cfg(unix)]
    let _ = assay::agent::serve::raise_open_file_limit();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let server = Server::bind(project, options).await.map_err(CliError::from)?;
        let address = server.local_addr()?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "serving the assay API (GET /v1/openapi.json lists it) on http://{address}")?;
        out.flush()?;
        drop(out);
        match server.run().await {}
    })
}
