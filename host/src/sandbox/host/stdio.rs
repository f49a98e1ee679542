//! The host side of a guest's WASI stdout and stderr: both go into the
//! plugin's capped log (level `stdout` / `stderr`), one log line per line
//! written, never to the host's own streams. Writing never blocks and never
//! fails: what is over the log's caps is counted and dropped, so a guest
//! that prints (as every wasi-libc, componentize-py or TinyGo guest does on
//! `print`) runs exactly as one that does not.

use crate::sandbox::host::log::{SharedLog, Stream};
use bytes::Bytes;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// How many bytes a guest may write per `check-write` permit.
const PERMIT_BYTES: usize = 64 << 10;

/// A guest output stream feeding the plugin's log.
#[derive(Clone)]
pub(crate) struct LogStream {
    log: SharedLog,
    stream: Stream,
}

impl LogStream {
    /// The guest's stdout.
    pub(crate) fn stdout(log: SharedLog) -> LogStream {
        LogStream { log, stream: Stream::Stdout }
    }

    /// The guest's stderr.
    pub(crate) fn stderr(log: SharedLog) -> LogStream {
        LogStream { log, stream: Stream::Stderr }
    }

    fn append(&self, bytes: &[u8]) {
        self.log.lock().expect("the log is never poisoned").write(self.stream, bytes);
    }
}

impl IsTerminal for LogStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for LogStream {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for LogStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(PERMIT_BYTES)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for LogStream {
    async fn ready(&mut self) {}
}

impl AsyncWrite for LogStream {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.append(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
