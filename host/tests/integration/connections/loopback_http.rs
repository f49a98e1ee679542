//! The bare HTTP/1.1 of the local model servers of the tests and benches
//! (`openai_stub.rs`, the `slow_judge` example): a listener on a free port
//! of 127.0.0.1 that says where it is, one request read from a kept-alive
//! connection, and one JSON answer written back. Enough for reqwest and
//! Node's fetch, which send a `content-length`; nothing more.

use std::io::Write as _;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A listener on a free port of 127.0.0.1, announced on stdout as
/// `serving on http://127.0.0.1:PORT/v1` (what the recorder and the benches
/// read), and its port.
pub async fn listen_announced() -> std::io::Result<(TcpListener, u16)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    println!("serving on http://127.0.0.1:{port}/v1");
    std::io::stdout().flush()?;
    Ok((listener, port))
}

/// The next request of a connection: its path and body; `None` when the
/// connection ends or breaks.
pub async fn read_request(stream: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let (mut length, mut line, mut path) = (0usize, String::new(), String::new());
    // The request line and headers, up to the blank line.
    loop {
        line.clear();
        if stream.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        if path.is_empty() {
            path = line.split_whitespace().nth(1).unwrap_or_default().to_owned();
        } else if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.ok()?;
    Some((path, body))
}

/// Writes a JSON answer with `status` (e.g. `200 OK`); false when the
/// connection broke.
pub async fn write_json(stream: &mut BufReader<TcpStream>, status: &str, json: &str) -> bool {
    let response =
        format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{json}", json.len());
    stream.get_mut().write_all(response.as_bytes()).await.is_ok()
}
