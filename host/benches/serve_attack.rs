//! `assay serve` under attack: good `POST /v1/check` requests at a steady
//! rate (default 1,000 a second) while hostile clients do what issue 29's
//! attacker did, all at once:
//!
//! - slow bodies: connections that announce a body and send a byte of it a
//!   second, kept at `ASSAY_BENCH_SLOW` open (default 256);
//! - bodies announced too large (413), `Host` headers of another name (DNS
//!   rebinding, 421), pages of another origin (403), `text/plain` posts
//!   (415);
//! - runs asking for four billion samples, and runs asking for 4,096 jobs,
//!   as fast as they are answered;
//! - checks of 4 MB answers.
//!
//! It starts the real `assay` binary (`assay serve --port 0 --no-token`,
//! from the same profile as the bench) and drives it from one tokio thread.
//! It prints the good requests' rate, p50, p99 and max latency, how many of
//! them were not answered 200 with a passing verdict (must be 0), how many
//! hostile requests were answered, and the server's peak resident memory
//! (`VmHWM`), which must stay under `ASSAY_BENCH_MAX_MB` (default 300): the
//! bench fails otherwise.
//!
//! ```text
//! cargo bench -p assay --bench serve_attack
//! ```

#[path = "support/served.rs"]
mod served;

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const GOOD: &str =
    r#"{"checks":[{"key":"keywords","actual":"the Beatles were a band from Liverpool","expected":"Beatles"}]}"#;

/// The good load's connections: each sends a request every
/// `connections / rate` seconds.
const GOOD_CONNECTIONS: usize = 50;

fn main() {
    let rate: usize = env_or("ASSAY_BENCH_RATE", 1000);
    let seconds: u64 = env_or("ASSAY_BENCH_SECS", 10);
    let slow: usize = env_or("ASSAY_BENCH_SLOW", 256);
    let max_mb: u64 = env_or("ASSAY_BENCH_MAX_MB", 300);
    let results = tempfile::tempdir().unwrap();
    let (mut server, address) = served::start(&["--results".as_ref(), results.path().as_os_str()], Stdio::null());

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let hostile_answered = Arc::new(AtomicUsize::new(0));
    let (good, elapsed) = runtime.block_on(async {
        let until = Instant::now() + Duration::from_secs(seconds);
        let mut attackers = tokio::task::JoinSet::new();
        for _ in 0..slow {
            attackers.spawn(slow_body(address.clone(), until));
        }
        for request in hostile_requests(&address) {
            attackers.spawn(repeat(address.clone(), request, until, hostile_answered.clone()));
        }
        let started = Instant::now();
        let mut clients = tokio::task::JoinSet::new();
        let interval = Duration::from_secs_f64(GOOD_CONNECTIONS as f64 / rate as f64);
        for i in 0..GOOD_CONNECTIONS {
            let offset = interval.mul_f64(i as f64 / GOOD_CONNECTIONS as f64);
            clients.spawn(good_client(address.clone(), interval, offset, until));
        }
        let mut good = Vec::new();
        while let Some(done) = clients.join_next().await {
            good.extend(done.unwrap());
        }
        let elapsed = started.elapsed();
        attackers.abort_all();
        (good, elapsed)
    });
    let peak_mb = peak_resident_mb(server.id());
    let _ = server.kill();
    let _ = server.wait();

    let failed = good.iter().filter(|(_, ok)| !ok).count();
    let mut latencies: Vec<Duration> = good.iter().map(|(latency, _)| *latency).collect();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    let millis = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "assay serve under attack ({slow} slow bodies, {} other hostile clients), {seconds} s:\n  \
         good: {:.0} requests/s ({} requests, {failed} not answered 200 passing)\n  \
         good latency p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms\n  \
         hostile requests answered: {}\n  server peak resident memory: {peak_mb} MB (ceiling {max_mb} MB)",
        hostile_requests(&address).len(),
        good.len() as f64 / elapsed.as_secs_f64(),
        good.len(),
        millis(at(0.50)),
        millis(at(0.99)),
        millis(*latencies.last().unwrap()),
        hostile_answered.load(Ordering::Relaxed),
    );
    assert_eq!(failed, 0, "good requests went unanswered");
    assert!(peak_mb <= max_mb, "the server's memory went past the ceiling");
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// `VmHWM` of process `pid`, in MB.
fn peak_resident_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    kb / 1024
}

/// A whole request.
fn post(address: &str, path: &str, headers: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\n{headers}content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The hostile requests sent over and over, each on a connection of its own.
fn hostile_requests(address: &str) -> Vec<String> {
    let huge_ratio = r#"{"cases":[{"name":"huge","text":"{ agent: echo, success_ratio: \"4000000000/4000000000\", interactions: [ { text: hi, response: { text: { value: hi } } } ] }"}]}"#;
    let greedy = r#"{"cases":[{"name":"g","text":"{ agent: echo, interactions: [ { text: hi } ] }"}],"jobs":4096}"#;
    let big_answer =
        format!(r#"{{"checks":[{{"key":"keywords","actual":"{}","expected":"zzz"}}]}}"#, "x".repeat(4 << 20));
    vec![
        format!(
            "POST /v1/check HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: 104857600\r\n\r\n"
        ),
        post("rebound.example:80", "/v1/check", "", GOOD),
        post(address, "/v1/check", "origin: https://evil.example\r\n", GOOD),
        format!(
            "POST /v1/runs HTTP/1.1\r\nhost: {address}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n{huge_ratio}",
            huge_ratio.len()
        ),
        post(address, "/v1/runs", "", huge_ratio),
        post(address, "/v1/runs", "", greedy),
        post(address, "/v1/check", "", &big_answer),
    ]
}

/// Sends `request` on a new connection each time, reads the answer, and
/// goes again until `until`.
async fn repeat(address: String, request: String, until: Instant, answered: Arc<AtomicUsize>) {
    let mut buffer = Vec::with_capacity(4096);
    while Instant::now() < until {
        let Ok(mut stream) = TcpStream::connect(&address).await else { continue };
        if stream.write_all(request.as_bytes()).await.is_err() {
            continue;
        }
        buffer.clear();
        if read_answer(&mut stream, &mut buffer).await.is_some() {
            answered.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A connection that announces 100 bytes of body and sends one a second;
/// once the server cuts it off, another.
async fn slow_body(address: String, until: Instant) {
    while Instant::now() < until {
        let Ok(mut stream) = TcpStream::connect(&address).await else { continue };
        let head = format!(
            "POST /v1/check HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n"
        );
        if stream.write_all(head.as_bytes()).await.is_err() {
            continue;
        }
        while Instant::now() < until && stream.write_all(b" ").await.is_ok() {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

/// Good requests on one keep-alive connection, one every `interval`
/// (starting at `offset`), until `until`: each one's latency and whether
/// it was answered 200 with a passing verdict.
async fn good_client(address: String, interval: Duration, offset: Duration, until: Instant) -> Vec<(Duration, bool)> {
    tokio::time::sleep(offset).await;
    let request = post(&address, "/v1/check", "", GOOD);
    let mut stream = TcpStream::connect(&address).await.expect("connect");
    stream.set_nodelay(true).unwrap();
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut results = Vec::new();
    let mut buffer = Vec::with_capacity(4096);
    while Instant::now() < until {
        ticks.tick().await;
        let sent = Instant::now();
        stream.write_all(request.as_bytes()).await.unwrap();
        buffer.clear();
        let body = read_answer(&mut stream, &mut buffer).await;
        let ok = buffer.starts_with(b"HTTP/1.1 200") && body.is_some_and(|b| b.contains("\"pass\":true"));
        results.push((sent.elapsed(), ok));
    }
    results
}

/// Reads one answer into `buffer`: its head, then `content-length` bytes.
/// The body; `None` if the connection ended first.
async fn read_answer(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<String> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize =
                head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok())?;
            while buffer.len() < end + 4 + length {
                let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
                buffer.extend_from_slice(&chunk[..n]);
            }
            return Some(String::from_utf8_lossy(&buffer[end + 4..end + 4 + length]).into_owned());
        }
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    }
}
