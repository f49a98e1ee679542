//! A scriptable HTTP server on 127.0.0.1 for fault injection: it records
//! each request (headers and body) and answers with whatever raw bytes the
//! test scripts, with pauses or a cut connection where asked, or drips a
//! keep-alive forever.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The request line, e.g. `POST /api/v1/echo/streaming_chat HTTP/1.1`.
    pub request_line: String,
    /// Header (lowercased name, value) pairs.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: serde_json::Value,
}

impl Recorded {
    /// The value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// What the server does with a request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Send these bytes as the whole response, then close.
    Raw(Vec<u8>),
    /// Send a 200 json-lines head, then each chunk after its pause, then
    /// close (a chunk without its newline makes a truncated stream).
    Chunks(Vec<(Duration, String)>),
    /// Send a 200 head with this content type, then `unit` after each
    /// `every`, for as long as the client listens: a server that is never
    /// silent for long and never done.
    Drip { content_type: &'static str, unit: &'static str, every: Duration },
}

impl Reply {
    /// A complete response with a status and body.
    pub fn status(code: u16, body: &str) -> Reply {
        Reply::Raw(
            format!("HTTP/1.1 {code} X\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
                .into_bytes(),
        )
    }

    /// A 200 stream of these lines, sent at once.
    pub fn lines(lines: &[&str]) -> Reply {
        Reply::Chunks(lines.iter().map(|l| (Duration::ZERO, format!("{l}\n"))).collect())
    }
}

/// The running server.
pub struct FakeServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Requests so far.
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    _runtime: tokio::runtime::Runtime,
}

impl FakeServer {
    /// Starts a server answering every request with `reply(request)`.
    pub fn start(reply: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> FakeServer {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let reply = Arc::new(reply);
        let recorded = requests.clone();
        runtime.spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { return };
                let (reply, recorded) = (reply.clone(), recorded.clone());
                tokio::spawn(async move {
                    let Some(request) = read_request(&mut stream).await else { return };
                    recorded.lock().unwrap().push(request.clone());
                    // A reply may block (a test's slow agent sleeps): on a
                    // blocking thread, so that it never holds up the
                    // connections beside it.
                    let Ok(answer) = tokio::task::spawn_blocking(move || reply(&request)).await else { return };
                    match answer {
                        Reply::Raw(bytes) => {
                            let _ = stream.write_all(&bytes).await;
                        }
                        Reply::Chunks(chunks) => {
                            let head =
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json-lines\r\nconnection: close\r\n\r\n";
                            if stream.write_all(head.as_bytes()).await.is_err() {
                                return;
                            }
                            for (pause, chunk) in chunks {
                                tokio::time::sleep(pause).await;
                                if stream.write_all(chunk.as_bytes()).await.is_err() {
                                    return;
                                }
                                let _ = stream.flush().await;
                            }
                        }
                        Reply::Drip { content_type, unit, every } => {
                            let head = format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n\r\n");
                            let mut sent = stream.write_all(head.as_bytes()).await;
                            while sent.is_ok() {
                                tokio::time::sleep(every).await;
                                sent = stream.write_all(unit.as_bytes()).await;
                            }
                        }
                    }
                    let _ = stream.shutdown().await;
                });
            }
        });
        FakeServer { port, requests, _runtime: runtime }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<Recorded> {
    let mut data = Vec::new();
    let mut buffer = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..n]);
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_owned())).collect();
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    while data.len() < head_end + length {
        let n = stream.read(&mut buffer).await.ok()?;
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buffer[..n]);
    }
    let body = serde_json::from_slice(&data[head_end..]).unwrap_or(serde_json::Value::Null);
    Some(Recorded { request_line, headers, body })
}

/// A TCP proxy on 127.0.0.1 in front of a server of its own (an `assay
/// agent serve`, say) that counts the connections made to it: none means
/// no request reached the server.
pub struct CountingProxy {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Connections accepted so far.
    pub connections: Arc<std::sync::atomic::AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

impl CountingProxy {
    /// Starts a proxy to `127.0.0.1:upstream`.
    pub fn start(upstream: u16) -> CountingProxy {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = connections.clone();
        runtime.spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else { return };
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        });
        CountingProxy { port, connections, _runtime: runtime }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Connections accepted so far.
    pub fn count(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }
}
