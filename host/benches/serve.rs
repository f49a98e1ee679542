//! Load on `assay serve`: requests per second and latency of `POST
//! /v1/check` with one `keywords` check, over HTTP/1.1 keep-alive.
//!
//! It starts the real `assay` binary (`assay serve --port 0`, from the
//! same profile as the bench) and drives it with a client of its own: one
//! thread of tokio, so that the client takes as little of the machine as
//! it can, with `ASSAY_BENCH_CONNECTIONS` connections (default 64), each
//! sending its next request as soon as the last is answered, for
//! `ASSAY_BENCH_SECS` seconds (default 10) after a second of warm-up. The
//! client is a few lines of raw HTTP/1.1 (a request written whole, an
//! answer read by its `content-length`) rather than a general client,
//! since on a 2-core machine whatever the client spends, the server does
//! not get: a lighter client measures the server, not itself.
//!
//! ```text
//! cargo bench -p assay --bench serve
//! ```
//!
//! It prints the requests per second, p50, p90, p99 and max latency, and
//! checks that every answer was a 200 with a passing verdict.

#[path = "support/served.rs"]
mod served;

use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const BODY: &str =
    r#"{"checks":[{"key":"keywords","actual":"the Beatles were a band from Liverpool","expected":"Beatles"}]}"#;

fn main() {
    let connections: usize = env_or("ASSAY_BENCH_CONNECTIONS", 64);
    let seconds: u64 = env_or("ASSAY_BENCH_SECS", 10);
    let (mut server, address) = served::start(&[], Stdio::inherit());

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let request = format!(
        "POST /v1/check HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let result = runtime.block_on(async {
        // Warm-up: connections made, instances pooled.
        load(&address, &request, connections, Duration::from_secs(1)).await;
        load(&address, &request, connections, Duration::from_secs(seconds)).await
    });
    let _ = server.kill();
    let _ = server.wait();

    let (mut latencies, elapsed) = result;
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "assay serve, POST /v1/check (one keywords check), {connections} keep-alive connections, {seconds} s:\n  \
         {:.0} requests/s ({} requests)\n  latency p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        latencies.len() as f64 / elapsed.as_secs_f64(),
        latencies.len(),
        micros(at(0.50)),
        micros(at(0.90)),
        micros(at(0.99)),
        micros(*latencies.last().unwrap()),
    );
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Every request's latency over `duration`, on `connections` connections,
/// and how long it took.
async fn load(address: &str, request: &str, connections: usize, duration: Duration) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let until = started + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..connections {
        let (address, request) = (address.to_owned(), request.to_owned());
        tasks.spawn(one_connection(address, request, until));
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done.unwrap());
    }
    (latencies, started.elapsed())
}

/// Requests on one keep-alive connection until `until`.
async fn one_connection(address: String, request: String, until: Instant) -> Vec<Duration> {
    let mut stream = TcpStream::connect(&address).await.expect("connect");
    stream.set_nodelay(true).unwrap();
    let mut latencies = Vec::new();
    let mut buffer = Vec::with_capacity(4096);
    while Instant::now() < until {
        let sent = Instant::now();
        stream.write_all(request.as_bytes()).await.unwrap();
        buffer.clear();
        let body = read_answer(&mut stream, &mut buffer).await;
        latencies.push(sent.elapsed());
        assert!(buffer.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&buffer));
        assert!(body.contains("\"pass\":true"), "{body}");
    }
    latencies
}

/// Reads one answer into `buffer`: its head, then `content-length` bytes.
/// The body.
async fn read_answer(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> String {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .expect("a content-length")
                .trim()
                .parse()
                .unwrap();
            while buffer.len() < end + 4 + length {
                let n = stream.read(&mut chunk).await.unwrap();
                assert!(n > 0, "the server closed the connection");
                buffer.extend_from_slice(&chunk[..n]);
            }
            return String::from_utf8_lossy(&buffer[end + 4..end + 4 + length]).into_owned();
        }
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the server closed the connection");
        buffer.extend_from_slice(&chunk[..n]);
    }
}
