//! The JavaScript engine (Boa) the assertions run in, and what it lets them
//! reach: a fresh context per assertion, with the language's built-ins, a
//! `console` that writes to the host's log, timers in virtual time, and
//! `require`, `process`, `fetch` and `import()` that throw a clear error.
//! The clock is fixed (`Date.now()` is 0, the Unix epoch, and moves only
//! with virtual timers) and `Math.random()` is a fixed sequence
//! (`random.rs`), so that a verdict depends on the code and the answer
//! alone. Endless loops and memory bombs are the host's to stop: its
//! deadline and memory cap end the call.

use crate::grade::Returned;
use boa_engine::builtins::promise::PromiseState;
use boa_engine::context::time::FixedClock;
use boa_engine::module::{ModuleLoader, ModuleRequest, Referrer};
use boa_engine::object::builtins::JsPromise;
use boa_engine::{
    Context, JsError, JsNativeError, JsObject, JsResult, JsString, JsValue, Module, NativeFunction, Source, js_string,
};
use serde_json::Value as Json;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

/// The harness of `prelude.js`.
const PRELUDE: &str = include_str!("prelude.js");

/// The prelude's name in stack traces, whose frames are left out of the
/// stacks the assertion's errors show.
const PRELUDE_NAME: &str = "assay-sandbox.js";

/// What an assertion runs.
#[derive(Clone, Copy, Debug)]
pub enum Script<'a> {
    /// Inline code: the body of `new Function('output', 'context',
    /// 'process', body)`.
    Inline {
        /// The function body.
        body: &'a str,
    },
    /// A `file://` module (CommonJS, or an ES module) and the function of it
    /// to call (else its default export).
    File {
        /// The file's name as the config gives it, for messages.
        name: &'a str,
        /// Its text.
        source: &'a str,
        /// The export to call, if named.
        function: Option<&'a str>,
    },
}

/// Runs `script` on `output` with promptfoo's assertion `context` in a fresh
/// engine and says what it gave, its promise settled.
///
/// `Err` is what promptfoo makes the test's error rather than a failed
/// assertion: a `file://` module that does not load, or whose function
/// throws or rejects (promptfoo calls it outside the assertion's own error
/// handling); the text is the error and its stack.
pub fn run(script: Script<'_>, output: &Json, context: &Json) -> Result<Returned, String> {
    let mut engine = match Engine::new() {
        Ok(engine) => engine,
        Err(error) => return Ok(threw_internal(&format!("the JavaScript engine did not start: {error}"))),
    };
    engine.run(script, output, context)
}

/// A context and its harness.
struct Engine {
    context: Context,
    clock: Rc<FixedClock>,
    harness: JsObject,
}

impl Engine {
    fn new() -> JsResult<Engine> {
        let clock = Rc::new(FixedClock::from_millis(0));
        let mut context = Context::builder().clock(clock.clone()).module_loader(Rc::new(SandboxLoader)).build()?;
        let log = NativeFunction::from_fn_ptr(log).to_js_function(context.realm());
        let prelude = context.eval(Source::from_bytes(PRELUDE).with_path(Path::new(PRELUDE_NAME)))?;
        let prelude =
            prelude.as_callable().ok_or_else(|| JsNativeError::typ().with_message("the prelude is not a function"))?;
        let harness = prelude.call(&JsValue::undefined(), &[log.into()], &mut context)?;
        let harness =
            harness.as_object().ok_or_else(|| JsNativeError::typ().with_message("the prelude gave no harness"))?;
        Ok(Engine { context, clock, harness })
    }

    fn run(&mut self, script: Script<'_>, output: &Json, context: &Json) -> Result<Returned, String> {
        let file = match script {
            Script::File { name, function, .. } => Some(match function {
                Some(function) => format!("file://{name}:{function}"),
                None => format!("file://{name}"),
            }),
            Script::Inline { .. } => None,
        };
        let settled = self.call(script, output, context).and_then(|value| self.settle(value));
        let value = match (settled, file) {
            (Ok(value), _) => value,
            (Err(error), None) => return Ok(self.thrown(error)),
            (Err(error), Some(file)) => {
                let (message, stack) = match self.thrown(error) {
                    Returned::Threw { message, stack } => (message, stack),
                    _ => unreachable!("an error is thrown"),
                };
                let stack = if stack.is_empty() { message } else { stack };
                return Err(format!("{file} threw {stack}"));
            }
        };
        Ok(match self.harness_call("validate", &[value]) {
            Ok(value) => self.returned(&value),
            Err(error) => self.thrown(error),
        })
    }

    /// Calls the assertion's function; what it returns, unsettled.
    fn call(&mut self, script: Script<'_>, output: &Json, context: &Json) -> JsResult<JsValue> {
        let output = JsValue::from_json(output, &mut self.context)?;
        let context = JsValue::from_json(context, &mut self.context)?;
        let context = self.harness_call("context", &[context])?;
        match script {
            Script::Inline { body } => {
                let function = self.harness_call("inline", &[JsString::from(body).into()])?;
                let process = self.harness.get(js_string!("process"), &mut self.context)?;
                self.call_function(&function, &[output, context, process])
            }
            Script::File { name, source, function } => {
                let namespace = self.load(name, source)?;
                let wanted = function.map_or_else(JsValue::undefined, |f| JsString::from(f).into());
                let function = self.harness_call("pick", &[namespace, wanted, JsString::from(name).into()])?;
                self.call_function(&function, &[output, context])
            }
        }
    }

    /// A file's module namespace: as CommonJS, or as an ES module when it
    /// has `import` or `export` statements.
    fn load(&mut self, name: &str, source: &str) -> JsResult<JsValue> {
        if !is_es_module(source) {
            // Node's wrapper, opened on the source's first line so that
            // stack traces give the file's own line numbers.
            let wrapped = format!("(function (exports, require, module, __filename, __dirname) {{{source}\n}})");
            let body = self.context.eval(Source::from_bytes(&wrapped).with_path(Path::new(name)))?;
            return self.harness_call("commonjs", &[body, JsString::from(name).into()]);
        }
        let module = Module::parse(Source::from_bytes(source).with_path(Path::new(name)), None, &mut self.context)?;
        let promise = module.load_link_evaluate(&mut self.context);
        self.context.run_jobs()?;
        match promise.state() {
            PromiseState::Fulfilled(_) => Ok(module.namespace(&mut self.context).into()),
            PromiseState::Rejected(error) => Err(JsError::from_opaque(error)),
            PromiseState::Pending => Err(JsNativeError::error()
                .with_message(format!("{name} did not finish loading (a top-level `await` that never settles)"))
                .into()),
        }
    }

    /// The function's result with its promise (if it is one) settled:
    /// promise jobs run, then timers in virtual time, until it settles or
    /// nothing is left to run.
    fn settle(&mut self, value: JsValue) -> JsResult<JsValue> {
        match value.as_promise() {
            None => Ok(value),
            Some(promise) => self.await_promise(&promise),
        }
    }

    fn await_promise(&mut self, promise: &JsPromise) -> JsResult<JsValue> {
        loop {
            self.context.run_jobs()?;
            match promise.state() {
                PromiseState::Fulfilled(value) => return Ok(value),
                PromiseState::Rejected(error) => return Err(JsError::from_opaque(error)),
                PromiseState::Pending => {}
            }
            let at = self.harness_call("nextTimer", &[])?.as_number().unwrap_or(-1.0);
            if at < 0.0 {
                return Err(JsNativeError::error()
                    .with_message("the promise the function returned never settled (nothing is left to run)")
                    .into());
            }
            let now = self.context.clock().system_time_millis() as f64;
            if at > now {
                self.clock.forward((at - now) as u64);
            }
            self.harness_call("fireTimer", &[])?;
        }
    }

    /// A validated result (a boolean, a number or a GradingResult).
    fn returned(&mut self, value: &JsValue) -> Returned {
        if let Some(pass) = value.as_boolean() {
            return Returned::Bool(pass);
        }
        if let Some(score) = value.as_number() {
            return Returned::Number(score);
        }
        let read = |engine: &mut Engine| -> JsResult<Returned> {
            let object = value.as_object().ok_or_else(|| JsNativeError::typ().with_message("not an object"))?;
            let pass = object.get(js_string!("pass"), &mut engine.context)?.to_boolean();
            let score = object.get(js_string!("score"), &mut engine.context)?.to_number(&mut engine.context)?;
            let reason = object.get(js_string!("reason"), &mut engine.context)?.to_string(&mut engine.context)?;
            Ok(Returned::Grading { pass, score, reason: reason.to_std_string_escaped() })
        };
        read(self).unwrap_or_else(|error| self.thrown(error))
    }

    /// A thrown error as promptfoo reports it: its message and stack.
    fn thrown(&mut self, error: JsError) -> Returned {
        let value = match error.into_opaque(&mut self.context) {
            Ok(value) => value,
            // An error the script cannot catch (an engine limit).
            Err(error) => return threw_internal(&error.to_string()),
        };
        let Some(object) = value.as_object() else {
            let text = self.string_of(&value);
            return Returned::Threw { message: text.clone(), stack: text };
        };
        let message = object.get(js_string!("message"), &mut self.context).map(|m| self.string_of(&m));
        let name = object.get(js_string!("name"), &mut self.context).map(|n| self.string_of(&n));
        let stack = object.get(js_string!("stack"), &mut self.context).ok().filter(JsValue::is_string);
        let message = message.unwrap_or_default();
        let headline = match name {
            Ok(name) if !name.is_empty() && name != "undefined" => format!("{name}: {message}"),
            _ => message.clone(),
        };
        let stack = match stack {
            Some(stack) => {
                let stack = self.string_of(&stack);
                let stack: Vec<&str> = stack.lines().filter(|line| !line.contains(PRELUDE_NAME)).collect();
                let stack = stack.join("\n");
                if stack.starts_with(&headline) { stack } else { format!("{headline}\n{stack}") }
            }
            None => headline,
        };
        Returned::Threw { message, stack }
    }

    /// `String(value)`, or a description when that throws.
    fn string_of(&mut self, value: &JsValue) -> String {
        match value.to_string(&mut self.context) {
            Ok(text) => text.to_std_string_escaped(),
            Err(_) => format!("a thrown {}", value.type_of()),
        }
    }

    fn harness_call(&mut self, name: &str, args: &[JsValue]) -> JsResult<JsValue> {
        let function = self.harness.get(JsString::from(name), &mut self.context)?;
        let harness = JsValue::from(self.harness.clone());
        let function =
            function.as_callable().ok_or_else(|| JsNativeError::typ().with_message(format!("no harness `{name}`")))?;
        function.call(&harness, args, &mut self.context)
    }

    fn call_function(&mut self, function: &JsValue, args: &[JsValue]) -> JsResult<JsValue> {
        let function = function
            .as_callable()
            .ok_or_else(|| JsNativeError::typ().with_message("the assertion is not a function"))?;
        function.call(&JsValue::undefined(), args, &mut self.context)
    }
}

/// An error of the engine rather than of the script.
fn threw_internal(message: &str) -> Returned {
    Returned::Threw { message: message.to_owned(), stack: message.to_owned() }
}

/// Whether a file's source is an ES module: a line that starts with an
/// `import` or `export` statement (`import(` is a dynamic import, which
/// scripts have too).
fn is_es_module(source: &str) -> bool {
    source.lines().map(str::trim_start).any(|line| {
        line.starts_with("export ")
            || line.starts_with("export{")
            || line.starts_with("export default")
            || (line.starts_with("import ")
                || line.starts_with("import{")
                || line.starts_with("import\"")
                || line.starts_with("import'"))
    })
}

/// `console.*`: one line to the host's log (capped there).
fn log(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    use assay_plugin_sdk::log::{Level, emit};
    let level = args.first().map(|l| l.to_string(context)).transpose()?.map(|l| l.to_std_string_escaped());
    let line = args.get(1).map(|l| l.to_string(context)).transpose()?.map(|l| l.to_std_string_escaped());
    let level = match level.as_deref() {
        Some("error") => Level::Error,
        Some("warn") => Level::Warn,
        Some("debug") => Level::Debug,
        Some("trace") => Level::Trace,
        _ => Level::Info,
    };
    emit(level, &line.unwrap_or_default());
    Ok(JsValue::undefined())
}

/// `import` of anything: refused, naming what was asked for.
struct SandboxLoader;

impl ModuleLoader for SandboxLoader {
    async fn load_imported_module(
        self: Rc<Self>,
        _referrer: Referrer,
        request: ModuleRequest,
        _context: &RefCell<&mut Context>,
    ) -> JsResult<Module> {
        let specifier = request.specifier().to_std_string_escaped();
        Err(JsNativeError::error()
            .with_message(format!("import('{specifier}') is not available: assertions run sandboxed"))
            .into())
    }
}
