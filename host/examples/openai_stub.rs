//! The deterministic OpenAI-compatible model of the promptfoo example
//! corpus, as a program for promptfoo's side of the comparison (its rules:
//! `host/tests/integration/connections/openai_stub.rs`, shared with the test).
//!
//! ```sh
//! cargo run -p assay --example openai_stub
//! ```
//!
//! prints `serving on http://127.0.0.1:PORT/v1` (a free port) and serves
//! until killed.

#[path = "../tests/integration/connections/loopback_http.rs"]
mod loopback_http;
#[path = "../tests/integration/connections/openai_stub.rs"]
mod openai_stub;

use std::process::ExitCode;

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build();
    let runtime = runtime.expect("a tokio runtime starts");
    runtime.block_on(async {
        match loopback_http::listen_announced().await {
            Ok((listener, _)) => openai_stub::serve(listener).await,
            Err(error) => {
                eprintln!("failed to listen on 127.0.0.1: {error}");
                return ExitCode::FAILURE;
            }
        }
        ExitCode::SUCCESS
    })
}
