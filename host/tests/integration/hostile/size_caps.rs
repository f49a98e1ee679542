//! Size caps on what assay reads from outside: component files (plugins and
//! agents, from every place they can be named) and the bodies the judge and
//! embeddings backends answer with.

use crate::util::{assay, stderr};
use std::path::Path;

/// A sparse file of 65 MiB: over the 64 MiB cap, yet no disk used.
fn sparse_component(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(path).unwrap().set_len(65 << 20).unwrap();
}

/// Asserts that `output` failed naming `file`, its size and the cap.
fn assert_refused(output: &std::process::Output, file: &str) {
    assert_ne!(output.status.code(), Some(0));
    let error = stderr(output);
    assert!(error.contains(file), "{error}");
    assert!(error.contains("it is 68157440 bytes (65.0 MiB), over the 64 MiB cap on component files"), "{error}");
    assert!(error.contains("Consider stripping its debug information"), "{error}");
}

#[test]
fn component_files_over_64_mib_are_refused_wherever_they_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.wasm");
    sparse_component(&big);
    let big = big.to_str().unwrap();
    let config = dir.path().join("assay.toml");
    let config = config.to_str().unwrap();

    // [plugins.NAME], and `assay plugins --lock` hashing it.
    std::fs::write(config, "[plugins.big]\npath = \"big.wasm\"\n").unwrap();
    assert_refused(&assay(&["plugins", "--config", config]), "big.wasm");
    assert_refused(&assay(&["plugins", "--lock", "--config", config]), "big.wasm");
    // `.assay/plugins/`.
    std::fs::write(config, "").unwrap();
    let auto = dir.path().join(".assay/plugins/auto.wasm");
    sparse_component(&auto);
    assert_refused(&assay(&["plugins", "--config", config]), "auto.wasm");
    std::fs::remove_file(&auto).unwrap();
    // `--plugin`, for `assay check`.
    let check = ["check", "--config", config, "--plugin", big, "--key", "value", "--actual", "1", "--expected", "1"];
    assert_refused(&assay(&check), "big.wasm");
    // [agents], and `--agent`.
    std::fs::write(config, "[agents]\nbig = \"big.wasm\"\n").unwrap();
    assert_refused(&assay(&["agent", "list", "--config", config]), "big.wasm");
    std::fs::write(config, "").unwrap();
    let agent = format!("big={big}");
    assert_refused(&assay(&["agent", "list", "--config", config, "--agent", &agent]), "big.wasm");
    // A component `assay agent serve` is given.
    assert_refused(&assay(&["agent", "serve", "--config", config, "--port", "0", big]), "big.wasm");
}

const OK_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
const OK_HEAD_WITH_LENGTH: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 17825792\r\nconnection: close\r\n\r\n";
const ERROR_HEAD: &str = "HTTP/1.1 500 X\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n";

/// A server on 127.0.0.1 that answers every request with `head` and then
/// a body without end, until the client goes away. Its port.
fn endless(head: &'static str) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut request = [0u8; 65536];
                let _ = stream.read(&mut request);
                let chunk = vec![b' '; 1 << 16];
                if stream.write_all(head.as_bytes()).is_ok() {
                    while stream.write_all(&chunk).is_ok() {}
                }
            });
        }
    });
    port
}

/// Runs `f` on a thread and waits at most 30 s for it: a body read without
/// a cap would go on until the backend's own 60 s timeout, or forever.
fn within_30_s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || send.send(f()));
    receive.recv_timeout(std::time::Duration::from_secs(30)).expect("still reading after 30 s")
}

fn judge_at(port: u16) -> assay::backend::RemoteJudge {
    let mut settings = assay::backend::JudgeSettings::openai(format!("http://127.0.0.1:{port}/v1"), "m");
    settings.retry.retries = 0;
    assay::backend::RemoteJudge::new(settings).unwrap()
}

#[test]
fn judge_and_embeddings_answers_are_read_up_to_16_mib() {
    use assay::backend::{EmbeddingsSettings, RemoteEmbeddings};
    use assay::sandbox::host::embeddings::Embeddings;
    use assay::sandbox::host::judge::Judge;
    const CAPPED: &str = "answered with more than 16 MiB, the cap on an answer; the rest was not read";
    for head in [OK_HEAD, OK_HEAD_WITH_LENGTH] {
        let port = endless(head);
        let error = within_30_s(move || {
            judge_at(port).complete("x", &assay::sandbox::host::CapabilitySpend::default()).answer.unwrap_err()
        });
        assert!(error.starts_with("the judge at http://127.0.0.1:") && error.ends_with(CAPPED), "{error}");
        let url = format!("http://127.0.0.1:{port}/v1");
        let embeddings = RemoteEmbeddings::new(EmbeddingsSettings::new(url, "e")).unwrap();
        let error = within_30_s(move || {
            embeddings.embed(&["x".into()], &assay::sandbox::host::CapabilitySpend::default()).answer.unwrap_err()
        });
        assert!(error.starts_with("the embeddings backend at") && error.ends_with(CAPPED), "{error}");
    }
    // An error answer is read for its preview only.
    let port = endless(ERROR_HEAD);
    let error = within_30_s(move || {
        judge_at(port).complete("x", &assay::sandbox::host::CapabilitySpend::default()).answer.unwrap_err()
    });
    assert!(error.contains("/v1/chat/completions answered HTTP 500:"), "{error}");
}

#[test]
fn an_agent_error_answer_is_read_for_its_preview_only() {
    use assay::agent::{ChatRequest, HttpAgents, HttpSettings};
    use assay::errors::AgentErrorKind;
    let port = endless(ERROR_HEAD);
    let kind = within_30_s(move || {
        let agents = HttpAgents::new(HttpSettings::default()).unwrap();
        let request = ChatRequest { agent: "echo".into(), text: "x".into(), ..ChatRequest::default() };
        let url = format!("http://127.0.0.1:{port}/api/v1/echo/streaming_chat");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(agents.chat(&url, &request)).unwrap_err()
    });
    match kind {
        AgentErrorKind::Status { status: 500, body } => assert_eq!(body, " ".repeat(300)),
        other => panic!("expected HTTP 500, got {other:?}"),
    }
    // The neuro-san judge reads its agent the same way.
    let port = endless(ERROR_HEAD);
    let error = within_30_s(move || {
        let mut settings = assay::backend::JudgeSettings::neuro_san(format!("http://127.0.0.1:{port}/gist"));
        settings.retry.retries = 0;
        let judge = assay::agent::remote_judge(settings).unwrap();
        let spend = assay::sandbox::host::CapabilitySpend::default();
        assay::sandbox::host::judge::Judge::complete(&judge, "x", &spend).answer.unwrap_err()
    });
    assert!(error.contains("answered HTTP 500"), "{error}");
}
