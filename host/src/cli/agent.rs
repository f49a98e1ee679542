//! `assay agent serve` and `assay agent list`.

use crate::agent::serve;
use crate::cli::CliError;
use crate::cli::args::{AgentCommand, AgentListArgs, ServeArgs, ServeProtocol};
use crate::cli::options::seconds;
use std::io::Write;

/// Runs an `assay agent` command.
pub fn run(command: AgentCommand) -> anyhow::Result<u8> {
    match command {
        AgentCommand::Serve(args) => serve_agents(args),
        AgentCommand::List(args) => list(args),
    }
}

fn list(args: AgentListArgs) -> anyhow::Result<u8> {
    let project = crate::cli::project::open(&args.project, None, None)?;
    let catalog = project.catalog()?;
    let mut out = std::io::stdout().lock();
    for name in catalog.names().map(str::to_owned).collect::<Vec<_>>() {
        let agent = catalog.get(&name).map_err(anyhow::Error::msg)?.expect("listed names are known");
        writeln!(out, "{name:<16} {} — {}", agent.source(), agent.description())?;
    }
    Ok(crate::exit_codes::OK)
}

fn serve_agents(args: ServeArgs) -> anyhow::Result<u8> {
    let project = crate::cli::project::open(&args.project, None, None)?;
    let served = project.served_agents(&args.names)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(serve::tls_acceptor(cert, key).map_err(CliError::Serve)?),
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    if args.max_connections == 0 {
        let message = "0 would serve nothing: use at least 1".to_owned();
        return Err(CliError::Flag { flag: "--max-connections", message }.into());
    }
    let protocol = match args.protocol {
        ServeProtocol::NeuroSan => serve::Protocol::NeuroSan,
        ServeProtocol::Openai => serve::Protocol::OpenAi,
    };
    let options = serve::ServeOptions {
        protocol,
        latency: std::time::Duration::from_millis(args.latency_ms),
        read_timeout: seconds(args.read_timeout, "--read-timeout")?,
        max_connections: args.max_connections,
    };
    // Each connection holds a file descriptor: the connection cap, not the
    // soft limit (often 1024), should bound how many are held. A limit
    // that cannot be raised leaves accept() failing now and then, which
    // the server survives.
    #[cfg(unix)]
    let _ = serve::raise_open_file_limit();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .map_err(|e| CliError::Serve(format!("cannot listen on 127.0.0.1:{}: {e}", args.port)))?;
        let address = listener.local_addr()?;
        let names: Vec<&str> = served.keys().map(String::as_str).collect();
        let mut out = std::io::stdout().lock();
        match protocol {
            serve::Protocol::NeuroSan => writeln!(out, "serving {} on {scheme}://{address}", names.join(", "))?,
            // The URL an `openai` connection's `url` names.
            serve::Protocol::OpenAi => {
                writeln!(out, "serving {} (OpenAI-compatible) on {scheme}://{address}/v1", names.join(", "))?
            }
        }
        out.flush()?;
        drop(out);
        match serve::serve(listener, served, tls, options).await {}
    })
}
