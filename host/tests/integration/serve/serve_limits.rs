//! `assay agent serve` outlives its clients: idle connections by the
//! thousand, a connection cap, clients that send nothing or half a request,
//! and running out of file descriptors.

use crate::util::Served;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const BODY: &str = r#"{"user_message": {"text": "hello"}}"#;

/// A whole streaming_chat request for the echo agent.
fn chat_request() -> String {
    format!(
        "POST /api/v1/echo/streaming_chat HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{BODY}",
        BODY.len()
    )
}

/// Everything the server sends until it closes, or what came before
/// `limit` passed.
fn read_all(stream: &mut TcpStream, limit: Duration) -> std::io::Result<String> {
    stream.set_read_timeout(Some(limit))?;
    let mut text = Vec::new();
    stream.read_to_end(&mut text)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// Sends a chat over a new connection: the response, and how long it took.
fn chat(port: u16) -> (String, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(chat_request().as_bytes()).unwrap();
    let response = read_all(&mut stream, Duration::from_secs(30)).unwrap();
    (response, started.elapsed())
}

/// Asserts an answered chat: 200 and the echo.
fn assert_answered(response: &str) {
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.contains("hello"), "{response}");
}

/// Whether the server has closed `stream` (rather than holding it open).
fn closed(mut stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let closed = match stream.read(&mut byte) {
        Ok(_) => true,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    };
    stream.set_nonblocking(false).unwrap();
    closed
}

#[cfg(unix)]
#[test]
fn a_thousand_idle_connections_do_not_keep_a_chat_waiting() {
    // This test holds a thousand sockets, as the server does: more than
    // the usual soft limit of 1024 descriptors (the server raises its own).
    let limit = assay::agent::serve::raise_open_file_limit().unwrap();
    assert!(limit >= 2048, "this test needs 2048 open files; the hard limit here is {limit}");
    let served = Served::start(&["--read-timeout", "60"]);
    let idle: Vec<TcpStream> = (0..1000).map(|_| TcpStream::connect(("127.0.0.1", served.port())).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));

    let (response, took) = chat(served.port());
    assert_answered(&response);
    assert!(took < Duration::from_secs(5), "a chat took {took:?} next to 1000 idle connections");
    // The idle ones are held, not dropped to make room.
    assert_eq!(idle.iter().filter(|s| closed(s)).count(), 0);
}

#[test]
fn connections_past_the_cap_wait_until_one_closes() {
    let served = Served::start(&["--max-connections", "4", "--read-timeout", "60"]);
    let mut idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(("127.0.0.1", served.port())).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));

    let mut waiting = TcpStream::connect(("127.0.0.1", served.port())).unwrap();
    waiting.write_all(chat_request().as_bytes()).unwrap();
    let error = read_all(&mut waiting, Duration::from_secs(1)).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut), "{error}");

    idle.pop();
    let started = Instant::now();
    let response = read_all(&mut waiting, Duration::from_secs(30)).unwrap();
    assert_answered(&response);
    assert!(started.elapsed() < Duration::from_secs(5), "answered {:?} after a slot freed", started.elapsed());
}

#[test]
fn a_client_sending_nothing_half_a_head_or_half_a_body_is_cut_off_after_the_read_timeout() {
    let served = Served::start(&["--read-timeout", "1"]);
    let port = served.port();
    let silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut half_head = TcpStream::connect(("127.0.0.1", port)).unwrap();
    half_head.write_all(b"POST /api/v1/echo/streaming_chat HTTP/1.1\r\nhost: x\r\n").unwrap();
    let mut half_body = TcpStream::connect(("127.0.0.1", port)).unwrap();
    half_body
        .write_all(b"POST /api/v1/echo/streaming_chat HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"user_")
        .unwrap();

    let started = Instant::now();
    for (name, mut stream) in [("silent", silent), ("half a head", half_head)] {
        // Closed (hyper may say 408 first), long before our 30 s patience.
        let said = read_all(&mut stream, Duration::from_secs(30)).unwrap();
        assert!(said.is_empty() || said.starts_with("HTTP/1.1 408"), "{name}: {said}");
    }
    let said = read_all(&mut half_body, Duration::from_secs(30)).unwrap();
    assert!(said.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{said}");
    assert!(said.contains("the request body did not arrive within 1 s"), "{said}");
    assert!(started.elapsed() < Duration::from_secs(10), "cut off after {:?}", started.elapsed());

    // Meanwhile a real client is served.
    assert_answered(&chat(port).0);
}

#[cfg(unix)]
#[test]
fn the_server_outlives_running_out_of_file_descriptors() {
    let mut command = std::process::Command::new("sh");
    command.args(["-c", "ulimit -n 64 && exec \"$0\" agent serve --port 0 echo"]).arg(env!("CARGO_BIN_EXE_assay"));
    let mut served = Served::spawn(command);
    // More connections than it has descriptors: accept() fails with EMFILE.
    let flood: Vec<TcpStream> = (0..200).map(|_| TcpStream::connect(("127.0.0.1", served.port())).unwrap()).collect();
    std::thread::sleep(Duration::from_secs(1));
    assert!(served.is_running(), "the server ended when it ran out of descriptors");
    drop(flood);

    let (response, took) = chat(served.port());
    assert_answered(&response);
    assert!(took < Duration::from_secs(10), "answered {took:?} after the flood ended");
    let log = served.stop();
    assert!(log.contains("assay agent serve: cannot accept a connection: Too many open files"), "{log}");
    assert!(log.contains("assay agent serve: accepting connections again, after "), "{log}");
}
