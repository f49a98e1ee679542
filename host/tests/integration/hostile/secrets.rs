//! Credentials are used, never shown: API keys and the userinfo of URLs
//! (`http://user:s3cret@host`) stay out of `Debug` output, error messages,
//! the terminal and `results.jsonl`, while the requests still carry them.

use crate::fake_server::{FakeServer, Reply};
use crate::util::{assay, stderr, stdout};
use assay::agent::{HttpAgents, HttpSettings};
use assay::backend::{EmbeddingsSettings, JudgeBackend, JudgeSettings, RemoteEmbeddings, RemoteJudge};
use assay::sandbox::host::CapabilitySpend;
use assay::sandbox::host::embeddings::Embeddings;
use assay::sandbox::host::judge::Judge;

const KEY: &str = "sk-live-0123456789";
const PASSWORD: &str = "s3cret";

/// A port nothing listens on.
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn assert_hidden(text: &str) {
    assert!(!text.contains(KEY) && !text.contains(PASSWORD), "a credential shows in: {text}");
}

#[test]
fn debug_output_shows_no_api_key_and_no_url_password() {
    let url = format!("http://user:{PASSWORD}@127.0.0.1:{}/v1", dead_port());
    let openai = JudgeBackend::OpenAi { url: url.clone(), model: "m".into(), api_key: Some(KEY.into()) };
    let debug = format!("{openai:?}");
    assert_hidden(&debug);
    assert!(debug.contains("api_key: Some(\"[redacted]\")"), "{debug}");
    assert!(debug.contains("http://[redacted]@127.0.0.1:"), "{debug}");
    let settings = JudgeSettings::new(openai);
    assert_hidden(&format!("{settings:?}"));
    assert_hidden(&format!("{:?}", RemoteJudge::new(settings).unwrap()));
    let neuro_san = JudgeSettings::neuro_san(format!("http://user:{PASSWORD}@127.0.0.1:9/gist"));
    assert_hidden(&format!("{neuro_san:?}"));
    assert_hidden(&format!("{:?}", assay::agent::remote_judge(neuro_san).unwrap()));

    let mut embeddings = EmbeddingsSettings::new(url.clone(), "e");
    embeddings.api_key = Some(KEY.into());
    let debug = format!("{embeddings:?}");
    assert_hidden(&debug);
    assert!(debug.contains("api_key: Some(\"[redacted]\")"), "{debug}");
    assert_hidden(&format!("{:?}", RemoteEmbeddings::new(embeddings).unwrap()));

    let http = HttpSettings { base_url: url, ..HttpSettings::default() };
    assert_hidden(&format!("{http:?}"));
    assert_hidden(&format!("{:?}", HttpAgents::new(http).unwrap()));
}

#[test]
fn judge_and_embeddings_errors_show_no_url_password() {
    let url = format!("http://user:{PASSWORD}@127.0.0.1:{}/v1", dead_port());
    let error = RemoteJudge::new(JudgeSettings::openai(url.clone(), "m"))
        .unwrap()
        .complete("x", &CapabilitySpend::default())
        .answer
        .unwrap_err();
    assert!(error.starts_with("cannot reach the judge at http://[redacted]@127.0.0.1:"), "{error}");
    assert_hidden(&error);
    let error = RemoteEmbeddings::new(EmbeddingsSettings::new(url, "e"))
        .unwrap()
        .embed(&["x".into()], &CapabilitySpend::default())
        .answer
        .unwrap_err();
    assert!(error.starts_with("cannot reach the embeddings backend at http://[redacted]@127.0.0.1:"), "{error}");
    assert_hidden(&error);
    let neuro_san = format!("http://user:{PASSWORD}@127.0.0.1:{}/gist", dead_port());
    let error = assay::agent::remote_judge(JudgeSettings::neuro_san(neuro_san))
        .unwrap()
        .complete("x", &CapabilitySpend::default())
        .answer
        .unwrap_err();
    assert!(error.starts_with("the judge agent at http://[redacted]@127.0.0.1:"), "{error}");
    assert_hidden(&error);
    // A URL that does not parse is quoted without its userinfo too.
    let error = assay::agent::remote_judge(JudgeSettings::neuro_san(format!("http://user:{PASSWORD}@host:port/gist")))
        .unwrap_err();
    assert!(error.starts_with("invalid neuro-san judge URL `http://[redacted]@host:port/gist`"), "{error}");
}

#[test]
fn an_agent_error_for_a_url_with_a_password_shows_none_and_the_request_carries_it() {
    let server = FakeServer::start(|_| Reply::status(500, "boom"));
    let cases = tempfile::tempdir().unwrap();
    let case = cases.path().join("case.hocon");
    std::fs::write(
        &case,
        r#"{ "agent": "echo", "connections": "http", "interactions": [ { "text": "x", "response": { "text": { "value": "x" } } } ] }"#,
    )
    .unwrap();
    for port in [server.port, dead_port()] {
        let out = tempfile::tempdir().unwrap();
        let url = format!("http://user:{PASSWORD}@127.0.0.1:{port}");
        let results = out.path().to_str().unwrap();
        let output = assay(&[
            "run",
            case.to_str().unwrap(),
            "--agent-url",
            &url,
            "--results",
            results,
            "--junit",
            &format!("{results}/junit.xml"),
        ]);
        assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
        let shown = format!("{}{}", stdout(&output), stderr(&output));
        assert!(
            shown.contains(&format!("agent `echo` at http://[redacted]@127.0.0.1:{port}/api/v1/echo/streaming_chat")),
            "{shown}"
        );
        assert_hidden(&shown);
        for file in ["results.jsonl", "summary.json", "junit.xml"] {
            assert_hidden(&std::fs::read_to_string(out.path().join(file)).unwrap());
        }
    }
    // The credential went where it belongs: the request's basic auth.
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests[0].header("authorization"), Some("Basic dXNlcjpzM2NyZXQ="));
}
