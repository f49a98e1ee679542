//! `assay serve`: the flags as [`ServeOptions`], the token from its file or
//! ASSAY_SERVE_TOKEN (else generated, printed once and saved for tools, as
//! Jupyter does; `--no-token` on loopback only), then the library's server;
//! prints the address.

use super::CliError;
use super::args::ServeApiArgs;
use super::options::seconds;
use crate::serve::{ServeOptions, Server, Token};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The variable the token may come from.
const TOKEN_VAR: &str = "ASSAY_SERVE_TOKEN";

/// Where a generated token is saved, under the served root.
const GENERATED_TOKEN_FILE: &str = ".assay/serve-token";

/// The server's token, and where it came from.
enum TokenSource {
    /// Read from `--token-file` or ASSAY_SERVE_TOKEN.
    Given(Token),
    /// Generated now: printed once, and saved under the root once the
    /// server is bound (the root is checked then).
    Generated(Token),
    /// `--no-token`.
    None,
}

impl TokenSource {
    fn of(args: &ServeApiArgs, bind: SocketAddr) -> Result<TokenSource, CliError> {
        let from_var = std::env::var(TOKEN_VAR).ok().filter(|text| !text.is_empty());
        if args.no_token && from_var.is_some() {
            let message = format!("{TOKEN_VAR} is set too: unset it, or leave out --no-token to serve with it");
            return Err(CliError::Flag { flag: "--no-token", message });
        }
        let given = match (&args.token_file, from_var) {
            (Some(file), _) => Some(Token::read(file)),
            (None, Some(text)) => Some(Token::new(&text, TOKEN_VAR)),
            (None, None) => None,
        };
        if let Some(token) = given {
            return Ok(TokenSource::Given(token?));
        }
        if args.no_token {
            if !bind.ip().is_loopback() {
                let message = format!(
                    "serving {bind} with no token would let anyone who reaches it run checks and cases; it is for \
                     loopback only (--bind 127.0.0.1), else use --token-file FILE"
                );
                return Err(CliError::Flag { flag: "--no-token", message });
            }
            return Ok(TokenSource::None);
        }
        Ok(TokenSource::Generated(Token::generate()))
    }

    fn token(&self) -> Option<Token> {
        match self {
            TokenSource::Given(token) | TokenSource::Generated(token) => Some(token.clone()),
            TokenSource::None => None,
        }
    }

    /// Saves a generated token under `root`: where, or why not. Done
    /// before the address is printed, so that a tool that waits for the
    /// address finds the file.
    fn save(&self, root: &Path) -> Option<Result<PathBuf, String>> {
        let TokenSource::Generated(token) = self else { return None };
        let path = root.join(GENERATED_TOKEN_FILE);
        Some(token.save(&path).map(|()| path.clone()).map_err(|e| format!("not saved in {} ({e})", path.display())))
    }

    /// Prints a generated token, once, and where it was saved.
    fn announce(&self, out: &mut dyn Write, saved: Option<Result<PathBuf, String>>) -> std::io::Result<()> {
        let (TokenSource::Generated(token), Some(saved)) = (self, saved) else { return Ok(()) };
        writeln!(out, "token: {} (send it as `Authorization: Bearer TOKEN`)", token.reveal())?;
        match saved {
            Ok(path) => writeln!(out, "       saved in {} (readable by you alone), for tools", path.display()),
            Err(why) => writeln!(out, "       {why}; give one with --token-file FILE to share it with tools"),
        }
    }
}

pub fn run(args: ServeApiArgs) -> anyhow::Result<u8> {
    let bind = match (args.bind.parse::<SocketAddr>(), args.bind.parse::<IpAddr>()) {
        (Ok(address), _) => address,
        (_, Ok(ip)) => SocketAddr::new(ip, args.port),
        _ => {
            let message = format!("`{}` is not an IP address or IP:PORT, e.g. 127.0.0.1 or 0.0.0.0:7878", args.bind);
            return Err(CliError::Flag { flag: "--bind", message }.into());
        }
    };
    let token = TokenSource::of(&args, bind)?;
    let root = args.root.clone();
    let options = ServeOptions {
        bind,
        token: token.token(),
        root: args.root,
        results: args.results,
        max_body_bytes: args.max_body_mb.saturating_mul(1 << 20),
        request_timeout: seconds(args.request_timeout, "--request-timeout")?,
        max_requests: args.max_requests,
        max_runs: args.max_runs,
        max_jobs: args.jobs.unwrap_or(ServeOptions::default().max_jobs),
        run_timeout: seconds(args.run_timeout, "--run-timeout")?,
        keep_runs: args.keep_runs,
        max_connections: args.max_connections,
        read_timeout: seconds(args.read_timeout, "--read-timeout")?,
        allowed_origins: args.allow_origins,
    };
    // A server's clients are not its user: it trusts no file (not even
    // `[trust] commands`, nor ASSAY_ALLOW_COMMANDS) unless told so here.
    let mut project_options = super::project::options(&args.project, Some(&args.case_env), Some(&args.server));
    // Nor may its case files read a variable by its `ASSAY_CASE_` prefix:
    // only the names assay.toml or --allow-env give.
    project_options.named_env_only = true;
    project_options.trusted_files = match args.case_env.allow_commands {
        true => crate::project::TrustedFiles::Everything,
        false => crate::project::TrustedFiles::Nothing,
    };
    let project = Arc::new(crate::project::Project::open(project_options)?);
    // Each connection holds a file descriptor: see `assay agent serve`.
    #[cfg(unix)]
    let _ = crate::agent::serve::raise_open_file_limit();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let server = Server::bind(project, options).await.map_err(CliError::from)?;
        let address = server.local_addr()?;
        let saved = token.save(&root);
        let mut out = std::io::stdout().lock();
        writeln!(out, "serving the assay API (GET /v1/openapi.json lists it) on http://{address}")?;
        token.announce(&mut out, saved)?;
        out.flush()?;
        drop(out);
        match server.run().await {}
    })
}
