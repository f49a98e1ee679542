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

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

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
    let listener = match TcpListener::bind("127.0.0.1:0").await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("failed to listen on 127.0.0.1: {error}");
            return ExitCode::FAILURE;
        }
    };
    let port = listener.local_addr().expect("a bound listener has an address").port();
    println!("serving on http://127.0.0.1:{port}/v1");
    let _ = std::io::stdout().flush();
    let in_flight = Arc::new(InFlight::default());
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        tokio::spawn(connection(stream, latency, in_flight.clone()));
    }
}

/// Answers the requests of one kept-alive connection, one after another.
async fn connection(stream: TcpStream, latency: Duration, in_flight: Arc<InFlight>) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        // The request line and headers, up to the blank line.
        loop {
            line.clear();
            match stream.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if stream.read_exact(&mut body).await.is_err() {
            return;
        }
        let now = in_flight.now.fetch_add(1, Ordering::SeqCst) + 1;
        if in_flight.most.fetch_max(now, Ordering::SeqCst) < now {
            println!("in flight: {now}");
        }
        tokio::time::sleep(latency).await;
        in_flight.now.fetch_sub(1, Ordering::SeqCst);
        let answer = r#"{"choices":[{"message":{"role":"assistant","content":"pass"}}]}"#;
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if stream.get_mut().write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}
