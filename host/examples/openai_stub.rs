//! The deterministic OpenAI-compatible model of the promptfoo example
//! corpus, as a program for promptfoo's side of the comparison (its rules:
//! `host/tests/integration/openai_stub.rs`, shared with the test).
//!
//! ```sh
//! cargo run -p assay --example openai_stub
//! ```
//!
//! prints `serving on http://127.0.0.1:PORT/v1` (a free port) and serves
//! until killed.

#[path = "../tests/integration/openai_stub.rs"]
mod openai_stub;

use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build();
    let runtime = runtime.expect("a tokio runtime starts");
    runtime.block_on(async {
        let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("failed to listen on 127.0.0.1: {error}");
                return ExitCode::FAILURE;
            }
        };
        let port = listener.local_addr().expect("a bound listener has an address").port();
        println!("serving on http://127.0.0.1:{port}/v1");
        let _ = std::io::stdout().flush();
        openai_stub::serve(listener).await;
        ExitCode::SUCCESS
    })
}
