//! A slow language-model judge for the judge-bound benchmark
//! (`benches/judge.sh`): an OpenAI-compatible chat-completions server on
//! 127.0.0.1 that answers every request with `pass` after a fixed latency,
//! however many arrive at once, and reports the most it ever had in flight.
//!
//! ```sh
//! cargo run --release -p assay --example slow_judge -- [LATENCY_MS]
//! ```
//!
//! prints `serving on http://127.0.0.1:PORT/v1` (a free port), then a line
//! `in flight: N` each time the most requests in flight at once grows.
//! Connections are kept alive (HTTP/1.1), as a real endpoint would.

use loopback_http::{read_request, write_json};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::BufReader;
use tokio::net::TcpStream;

#[path = "../tests/integration/connections/loopback_http.rs"]
mod loopback_http;

/// Requests in flight now, and the most ever.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    most: AtomicUsize,
}

fn main() -> ExitCode {
    let latency = match std::env::args().nth(1).map(|arg| arg.parse::<u64>()) {
        None => Duration::from_millis(200),
        Some(Ok(ms)) => Duration::from_millis(ms),
        Some(Err(_)) => {
            eprintln!("usage: slow_judge [LATENCY_MS]");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build();
    let runtime = runtime.expect("a tokio runtime starts");
    runtime.block_on(serve(latency))
}

async fn serve(latency: Duration) -> ExitCode {
    let listener = match loopback_http::listen_announced().await {
        Ok((listener, _)) => listener,
        Err(error) => {
            eprintln!("failed to listen on 127.0.0.1: {error}");
            return ExitCode::FAILURE;
        }
    };
    let in_flight = Arc::new(InFlight::default());
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        tokio::spawn(connection(stream, latency, in_flight.clone()));
    }
}

/// Answers the requests of one kept-alive connection, one after another.
async fn connection(stream: TcpStream, latency: Duration, in_flight: Arc<InFlight>) {
    let mut stream = BufReader::new(stream);
    while read_request(&mut stream).await.is_some() {
        let now = in_flight.now.fetch_add(1, Ordering::SeqCst) + 1;
        if in_flight.most.fetch_max(now, Ordering::SeqCst) < now {
            println!("in flight: {now}");
        }
        tokio::time::sleep(latency).await;
        in_flight.now.fetch_sub(1, Ordering::SeqCst);
        let answer = r#"{"choices":[{"message":{"role":"assistant","content":"pass"}}]}"#;
        if !write_json(&mut stream, "200 OK", answer).await {
            return;
        }
    }
}
