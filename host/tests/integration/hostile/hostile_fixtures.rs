//! The hostile corpus does what its headers say, shown outside assay's
//! sandbox in plain wasmtime with WASI's output captured: `wasi-io` really
//! writes and exits, the hostile agent really prints and exits by the text
//! it is sent, and `judge-loop` really asks the judge without end. So the
//! tests that run them through assay test the sandbox, not a fixture that
//! never misbehaved. (The bindings are generated here, synchronous, so that
//! these tests do not depend on how assay calls components.)

use crate::hostile::hostile_support::{HOSTILE_AGENT, JUDGE_LOOP, WASI_IO};
use crate::util::root;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{I32Exit, WasiCtx, WasiCtxView, WasiView};

mod matcher {
    wasmtime::component::bindgen!({
        path: "../wit/plugin",
        world: "assay:plugin/capable-matcher-plugin",
        ownership: Borrowing { duplicate_if_necessary: true },
        imports: { "assay:plugin/judge.complete": trappable },
        anyhow: true,
    });
}

mod agent {
    wasmtime::component::bindgen!({
        path: "../wit/agent",
        world: "assay:agent/agent",
        ownership: Borrowing { duplicate_if_necessary: true },
        anyhow: true,
    });
}

use agent::exports::assay::agent::chat::{ChatFilter, ChatRequest};
use matcher::assay::plugin::types::{Actual, Check};

/// WASI whose standard output and error are captured, and the judge calls
/// a fixture made.
struct Captured {
    wasi: WasiCtx,
    table: ResourceTable,
    prompts: Vec<String>,
}

impl WasiView for Captured {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// The judge answers `pass` to the first 1,000 calls, then stops the guest.
impl matcher::assay::plugin::judge::Host for Captured {
    fn complete(&mut self, prompt: String) -> anyhow::Result<Result<String, String>> {
        self.prompts.push(prompt);
        if self.prompts.len() == 1000 {
            anyhow::bail!("the test judge stops after 1000 calls");
        }
        Ok(Ok("pass".into()))
    }
}

impl matcher::assay::plugin::embeddings::Host for Captured {
    fn embed(&mut self, _: Vec<String>) -> Result<Vec<Vec<f32>>, String> {
        Err("no embeddings here".into())
    }

    fn embed_tokens(&mut self, _: Vec<String>) -> Result<Vec<Vec<Vec<f32>>>, String> {
        Err("no embeddings here".into())
    }
}

impl matcher::assay::plugin::log::Host for Captured {
    fn emit(&mut self, _: matcher::assay::plugin::log::Level, _: String) {}
}

impl matcher::assay::plugin::types::Host for Captured {}

/// A store whose WASI output goes to `stdout` and `stderr`, a linker with
/// WASI and the plugin interfaces, and `file` compiled.
fn setup(
    file: &str,
    stdout: &MemoryOutputPipe,
    stderr: &MemoryOutputPipe,
) -> (Store<Captured>, Linker<Captured>, Component) {
    let engine = Engine::default();
    let component = Component::from_file(&engine, root().join(file)).unwrap();
    let mut linker = Linker::<Captured>::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
    matcher::CapableMatcherPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state).unwrap();
    let wasi = WasiCtx::builder().stdout(stdout.clone()).stderr(stderr.clone()).build();
    let store = Store::new(&engine, Captured { wasi, table: ResourceTable::new(), prompts: Vec::new() });
    (store, linker, component)
}

/// Evaluates one check of `key` on a fresh instance of `file`.
fn evaluate(
    file: &str,
    key: &str,
    stdout: &MemoryOutputPipe,
    stderr: &MemoryOutputPipe,
) -> (wasmtime::Result<matcher::assay::plugin::types::Verdict>, Vec<String>) {
    let (mut store, linker, component) = setup(file, stdout, stderr);
    let plugin = matcher::CapableMatcherPlugin::instantiate(&mut store, &component, &linker).unwrap();
    let answer = plugin.assay_plugin_matcher().call_evaluate(
        &mut store,
        &[Actual::Text("an answer")],
        &[Check { key, actual: 0, expected: "\"x\"" }],
    );
    let verdict = answer.map(|mut results| results.remove(0).expect("the fixture answers ok"));
    (verdict, std::mem::take(&mut store.data_mut().prompts))
}

/// What a 1 MiB flood writes: 16,384 lines of 63 `x` and a newline.
fn flood() -> Vec<u8> {
    let line = format!("{}\n", "x".repeat(63));
    line.repeat(16_384).into_bytes()
}

#[test]
fn wasi_io_really_writes_to_stdout_and_stderr_and_exits() {
    for (key, to_stdout, written) in [
        ("stdout", true, b"hello\n".to_vec()),
        ("stderr", false, b"hello\n".to_vec()),
        ("stdout_flood", true, flood()),
        ("stderr_flood", false, flood()),
    ] {
        let (stdout, stderr) = (MemoryOutputPipe::new(4 << 20), MemoryOutputPipe::new(4 << 20));
        let verdict = evaluate(WASI_IO, key, &stdout, &stderr).0.unwrap();
        assert!(!verdict.pass);
        assert_eq!(verdict.message, "printed");
        let (used, unused) = if to_stdout { (&stdout, &stderr) } else { (&stderr, &stdout) };
        assert!(used.contents() == written, "`{key}` wrote {} bytes", used.contents().len());
        assert!(unused.contents().is_empty(), "{key}");
    }

    let (stdout, stderr) = (MemoryOutputPipe::new(1024), MemoryOutputPipe::new(1024));
    let error = evaluate(WASI_IO, "exit", &stdout, &stderr).0.unwrap_err();
    assert_eq!(error.downcast_ref::<I32Exit>().map(|exit| exit.0), Some(1), "{error:?}");
}

#[test]
fn judge_loop_really_asks_the_judge_without_end() {
    let (stdout, stderr) = (MemoryOutputPipe::new(1024), MemoryOutputPipe::new(1024));
    let (answer, prompts) = evaluate(JUDGE_LOOP, "judge_loop", &stdout, &stderr);
    // It asked until the test judge stopped it.
    assert!(format!("{:?}", answer.unwrap_err()).contains("the test judge stops after 1000 calls"));
    assert_eq!(prompts.len(), 1000);
    assert!(prompts.iter().all(|p| p == "is the answer the same as last time? say pass"), "{:?}", &prompts[..2]);
}

#[test]
fn the_hostile_agent_really_prints_refuses_and_exits_by_the_text_it_is_sent() {
    let (stdout, stderr) = (MemoryOutputPipe::new(1024), MemoryOutputPipe::new(1024));
    let (mut store, linker, component) = setup(HOSTILE_AGENT, &stdout, &stderr);
    let agent = agent::Agent::instantiate(&mut store, &component, &linker).unwrap();
    let chat = agent.assay_agent_chat();
    let info = chat.call_describe(&mut store).unwrap();
    assert_eq!(info.name, "hostile-agent");
    let request = |text| ChatRequest {
        agent: "hostile-agent",
        text,
        sly_data: None,
        chat_context: None,
        chat_filter: ChatFilter::Minimal,
        metadata: &[],
    };
    for text in ["hello there", "print"] {
        let messages = chat.call_chat(&mut store, request(text)).unwrap().unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].message_type, "AGENT_FRAMEWORK");
        assert_eq!(messages[0].text.as_deref(), Some(text));
    }
    assert_eq!(&stdout.contents()[..], b"hello\n");
    assert_eq!(
        chat.call_chat(&mut store, request("fail")).unwrap().unwrap_err(),
        "the hostile agent was asked to fail"
    );
    let error = chat.call_chat(&mut store, request("exit")).unwrap_err();
    assert_eq!(error.downcast_ref::<I32Exit>().map(|exit| exit.0), Some(1), "{error:?}");
}
