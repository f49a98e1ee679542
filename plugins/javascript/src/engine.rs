//! The JavaScript engine (Boa) the assertions run in: a fresh context per
//! assertion, so that no assertion sees what another left (promptfoo runs
//! them all in Node's one realm), with the language's built-ins and the
//! sandbox's globals (`sandbox.rs`). The clock is fixed (`Date.now()` is
//! 0, the Unix epoch, and moves only with virtual timers), so that a
//! verdict depends on the code and the answer alone. Endless loops and
//! memory bombs are the host's to stop: its deadline and memory cap end the
//! call.
//!
//! Here: promptfoo's call (`new Function('output', 'context', 'process',
//! body)`, or a `file://` module's function, loaded as `modules.js` says),
//! the promise settled (promise jobs, then timers), the result validated
//! as promptfoo's `validateResult` does, and a thrown error's message and
//! stack.

use crate::grade::Returned;
use crate::sandbox;
use crate::typescript;
use boa_engine::builtins::promise::PromiseState;
use boa_engine::context::time::FixedClock;
use boa_engine::module::{ModuleLoader, ModuleRequest, Referrer};
use boa_engine::object::builtins::{JsFunction, JsPromise};
use boa_engine::{
    Context, JsError, JsNativeError, JsObject, JsResult, JsString, JsValue, Module, NativeFunction, Source, js_string,
};
use serde_json::Value as Json;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

/// How a `file://` module is loaded: evaluated in the contexts of the
/// assertions that name a file.
const MODULES: &str = include_str!("modules.js");

/// The name of `modules.js` in stack traces, whose frames are left out of
/// the stacks the assertion's errors show.
const MODULES_NAME: &str = "assay-modules.js";

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

/// What a value script runs ([`value`]).
#[derive(Clone, Copy, Debug)]
pub enum ValueScript<'a> {
    /// promptfoo's inline transform: the body of `new Function(input,
    /// 'context', 'process', body)`, where the body is the code when it has
    /// several lines and `return CODE` when it has one.
    Inline {
        /// The code.
        code: &'a str,
        /// The name of the first parameter: `output` or `vars`.
        input: &'a str,
    },
    /// A module's transform function, found as promptfoo's
    /// `getJavascriptTransformFunction` finds it.
    Transform {
        /// The file's name as the config gives it.
        name: &'a str,
        /// Its text.
        source: &'a str,
        /// The export named after the file's `:`.
        function: Option<&'a str>,
    },
    /// A module's value as promptfoo's `importModule` gives it (a config, a
    /// tests file), called when it is a function (a test generator).
    Import {
        /// The file's name as the config gives it.
        name: &'a str,
        /// Its text.
        source: &'a str,
        /// The export named after the file's `:`.
        function: Option<&'a str>,
    },
}

/// Runs `script` in a fresh engine and gives its value as JSON, its promise
/// settled: a transform called with `input` and then `args`; an import's
/// value, called with `args` when it is a function. `None` is `undefined`.
/// `Err` says what was thrown (message and stack), or why the value cannot
/// leave the sandbox (a function in it, a cycle), naming where (`label`
/// names the value: `module.exports`, say).
pub fn value(script: ValueScript<'_>, input: &Json, args: &[Json], label: &str) -> Result<Option<Json>, String> {
    let mut engine = Engine::new().map_err(|error| format!("the JavaScript engine did not start: {error}"))?;
    let computed = engine.compute(script, input, args).and_then(|value| engine.settle(value));
    let value = computed.map_err(|error| engine.described(error))?;
    let text = engine.plain(value, label).map_err(|error| engine.described(error))?;
    match text {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text).map(Some).map_err(|e| format!("its value is not JSON: {e}")),
    }
}

/// A module's function loaded once into an engine of its own and called
/// many times there: only for code the plugin embeds (`sql.rs`), never a
/// config's, since what one call leaves in the engine the next one sees.
pub struct Loaded {
    engine: Engine,
    function: JsObject,
}

impl Loaded {
    /// Loads the module `source` (named `name` in messages) and finds its
    /// export `function`.
    pub fn new(name: &str, source: &str, function: &str) -> Result<Loaded, String> {
        let mut engine = Engine::new().map_err(|error| format!("the JavaScript engine did not start: {error}"))?;
        let found = (|| {
            let modules = engine.modules()?;
            let namespace = engine.load(&modules, name, source)?;
            let wanted = JsString::from(function).into();
            call_method(
                &modules,
                "transformFunction",
                &[namespace, wanted, JsString::from(name).into()],
                &mut engine.context,
            )
        })();
        let found = found.map_err(|error| engine.described(error))?;
        let function = found.as_callable().ok_or_else(|| format!("{name} has no function `{function}`"))?;
        Ok(Loaded { engine, function })
    }

    /// Calls the function with `args` and gives its value as JSON, its
    /// promise settled (see [`value`]); `label` names the value.
    pub fn call(&mut self, args: &[Json], label: &str) -> Result<Option<Json>, String> {
        let engine = &mut self.engine;
        let called = args
            .iter()
            .map(|arg| JsValue::from_json(arg, &mut engine.context))
            .collect::<JsResult<Vec<_>>>()
            .and_then(|args| self.function.call(&JsValue::undefined(), &args, &mut engine.context))
            .and_then(|value| engine.settle(value));
        let value = called.map_err(|error| engine.described(error))?;
        let text = engine.plain(value, label).map_err(|error| engine.described(error))?;
        match text {
            None => Ok(None),
            Some(text) => serde_json::from_str(&text).map(Some).map_err(|e| format!("its value is not JSON: {e}")),
        }
    }
}

/// A context, and the clock its timers move.
struct Engine {
    context: Context,
    clock: Rc<FixedClock>,
}

impl Drop for Engine {
    fn drop(&mut self) {
        sandbox::reset();
    }
}

impl Engine {
    fn new() -> JsResult<Engine> {
        sandbox::reset();
        let clock = Rc::new(FixedClock::from_millis(0));
        let mut context = Context::builder().clock(clock.clone()).module_loader(Rc::new(SandboxLoader)).build()?;
        sandbox::install(&mut context)?;
        Ok(Engine { context, clock })
    }

    fn run(&mut self, script: Script<'_>, output: &Json, context: &Json) -> Result<Returned, String> {
        let file = match script {
            Script::File { name, function: Some(function), .. } => Some(format!("file://{name}:{function}")),
            Script::File { name, function: None, .. } => Some(format!("file://{name}")),
            Script::Inline { .. } => None,
        };
        let settled = self.call(script, output, context).and_then(|value| self.settle(value));
        let value = match (settled, file) {
            (Ok(value), _) => value,
            (Err(error), None) => return Ok(self.thrown(error)),
            (Err(error), Some(file)) => {
                let Returned::Threw { message, stack } = self.thrown(error) else { unreachable!("an error is thrown") };
                let stack = if stack.is_empty() { message } else { stack };
                return Err(format!("{file} threw {stack}"));
            }
        };
        Ok(match self.validate(value) {
            Ok(returned) => returned,
            Err(error) => self.thrown(error),
        })
    }

    /// Calls the assertion's function; what it returns, unsettled.
    fn call(&mut self, script: Script<'_>, output: &Json, context: &Json) -> JsResult<JsValue> {
        let output = JsValue::from_json(output, &mut self.context)?;
        let context = JsValue::from_json(context, &mut self.context)?;
        self.provider_id_as_function(&context)?;
        match script {
            Script::Inline { body } => {
                let constructor = self.context.intrinsics().constructors().function().constructor();
                let args = ["output", "context", "process", body].map(|s| JsValue::from(JsString::from(s)));
                let function = constructor.construct(&args, None, &mut self.context)?;
                let process = self.context.global_object().get(js_string!("process"), &mut self.context)?;
                function.call(&JsValue::undefined(), &[output, context, process], &mut self.context)
            }
            Script::File { name, source, function } => {
                let modules = self.modules()?;
                let namespace = self.load(&modules, name, source)?;
                let wanted = function.map_or_else(JsValue::undefined, |f| JsString::from(f).into());
                let function = call_method(
                    &modules,
                    "pick",
                    &[namespace, wanted, JsString::from(name).into()],
                    &mut self.context,
                )?;
                let function = function
                    .as_callable()
                    .ok_or_else(|| JsNativeError::typ().with_message("the module gave no function"))?;
                function.call(&JsValue::undefined(), &[output, context], &mut self.context)
            }
        }
    }

    /// Calls or imports a value script; what it gives, unsettled.
    fn compute(&mut self, script: ValueScript<'_>, input: &Json, args: &[Json]) -> JsResult<JsValue> {
        let input = JsValue::from_json(input, &mut self.context)?;
        let mut args =
            args.iter().map(|arg| JsValue::from_json(arg, &mut self.context)).collect::<JsResult<Vec<_>>>()?;
        let transform = match script {
            ValueScript::Inline { code, input: parameter } => {
                let body = if code.contains('\n') { code.to_owned() } else { format!("return {code}") };
                let constructor = self.context.intrinsics().constructors().function().constructor();
                let parameters = [parameter, "context", "process", &body].map(|s| JsValue::from(JsString::from(s)));
                constructor.construct(&parameters, None, &mut self.context)?.into()
            }
            ValueScript::Transform { name, source, function } => {
                let modules = self.modules()?;
                let namespace = self.load(&modules, name, source)?;
                let wanted = function.map_or_else(JsValue::undefined, |f| JsString::from(f).into());
                let path = JsString::from(name).into();
                call_method(&modules, "transformFunction", &[namespace, wanted, path], &mut self.context)?
            }
            ValueScript::Import { name, source, function } => {
                let modules = self.modules()?;
                let namespace = self.load(&modules, name, source)?;
                let wanted = function.map_or_else(JsValue::undefined, |f| JsString::from(f).into());
                let found = call_method(&modules, "imported", &[namespace, wanted], &mut self.context)?;
                let found = self.settle(found)?;
                return match found.as_callable() {
                    Some(function) => function.call(&JsValue::undefined(), &args, &mut self.context),
                    None => Ok(found),
                };
            }
        };
        // promptfoo's `transform(fn, input, context, process)`.
        let function = transform
            .as_callable()
            .ok_or_else(|| JsNativeError::typ().with_message("the transform is not a function"))?;
        let process = self.context.global_object().get(js_string!("process"), &mut self.context)?;
        args.insert(0, input);
        args.truncate(2);
        args.resize(2, JsValue::undefined());
        args.push(process);
        function.call(&JsValue::undefined(), &args, &mut self.context)
    }

    /// A settled value as JSON text (`modules.js`'s `plain`), `None` for
    /// `undefined`.
    fn plain(&mut self, value: JsValue, label: &str) -> JsResult<Option<String>> {
        let modules = self.modules()?;
        let what = JsString::from(label).into();
        let text = call_method(&modules, "plain", &[value, what], &mut self.context)?;
        Ok(text.as_string().map(|text| text.to_std_string_escaped()))
    }

    /// A thrown error as one text: its stack (which starts with the
    /// message), else its message.
    fn described(&mut self, error: JsError) -> String {
        match self.thrown(error) {
            Returned::Threw { message, stack } if stack.is_empty() => message,
            Returned::Threw { stack, .. } => stack,
            _ => unreachable!("an error is thrown"),
        }
    }

    /// promptfoo's providers have `id()`: the context's `provider.id`
    /// becomes a function giving it.
    fn provider_id_as_function(&mut self, context: &JsValue) -> JsResult<()> {
        let Some(context) = context.as_object() else { return Ok(()) };
        let Some(provider) = context.get(js_string!("provider"), &mut self.context)?.as_object() else {
            return Ok(());
        };
        let Some(id) = provider.get(js_string!("id"), &mut self.context)?.as_string() else { return Ok(()) };
        let function = NativeFunction::from_copy_closure_with_captures(|_, _, id, _| Ok(id.clone().into()), id);
        let function = function.to_js_function(self.context.realm());
        provider.set(js_string!("id"), function, true, &mut self.context)?;
        Ok(())
    }

    /// The harness of `modules.js`.
    fn modules(&mut self) -> JsResult<JsObject> {
        let source = Source::from_bytes(MODULES).with_path(Path::new(MODULES_NAME));
        let factory = self.context.eval(source)?;
        let factory = factory.as_callable().ok_or_else(|| JsNativeError::typ().with_message("modules.js"))?;
        let modules = factory.call(&JsValue::undefined(), &[], &mut self.context)?;
        modules.as_object().ok_or_else(|| JsNativeError::typ().with_message("modules.js").into())
    }

    /// A file's module namespace ([`Engine::load_source`]); a TypeScript
    /// file's types are stripped first (`typescript.rs`).
    fn load(&mut self, modules: &JsObject, name: &str, source: &str) -> JsResult<JsValue> {
        if !typescript::is_typescript(name) {
            return self.load_source(modules, name, source);
        }
        let javascript =
            typescript::to_javascript(name, source).map_err(|error| JsNativeError::syntax().with_message(error))?;
        self.load_source(modules, name, &javascript)
    }

    /// A file's module namespace: as CommonJS, or as an ES module when it
    /// has `import` or `export` statements.
    fn load_source(&mut self, modules: &JsObject, name: &str, source: &str) -> JsResult<JsValue> {
        if !is_es_module(source) {
            // Node's wrapper, opened on the source's first line so that
            // stack traces give the file's own line numbers.
            let wrapped = format!("(function (exports, require, module, __filename, __dirname) {{{source}\n}})");
            let body = self.context.eval(Source::from_bytes(&wrapped).with_path(Path::new(name)))?;
            return call_method(modules, "commonjs", &[body, JsString::from(name).into()], &mut self.context);
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
            let Some(at) = sandbox::next_timer() else {
                return Err(JsNativeError::error()
                    .with_message("the promise the function returned never settled (nothing is left to run)")
                    .into());
            };
            let now = self.context.clock().system_time_millis() as f64;
            if at > now {
                self.clock.forward((at - now) as u64);
            }
            sandbox::fire_timer(&mut self.context)?;
        }
    }

    /// promptfoo's `validateResult`: a boolean, a number or a GradingResult,
    /// else the error promptfoo throws.
    fn validate(&mut self, value: JsValue) -> JsResult<Returned> {
        if let Some(pass) = value.as_boolean() {
            return Ok(Returned::Bool(pass));
        }
        if let Some(score) = value.as_number() {
            return Ok(Returned::Number(score));
        }
        if let Some(object) = value.as_object()
            && let Some(returned) = self.grading_result(&object)?
        {
            return Ok(returned);
        }
        let stringify = self.context.intrinsics().objects().json().get(js_string!("stringify"), &mut self.context)?;
        let shown = match stringify.as_callable() {
            Some(stringify) => {
                stringify.call(&JsValue::undefined(), std::slice::from_ref(&value), &mut self.context)?
            }
            None => JsValue::undefined(),
        };
        let shown = shown.to_string(&mut self.context)?.to_std_string_escaped();
        Err(JsNativeError::error()
            .with_message(format!(
                "Custom function must return a boolean, number, or GradingResult object. Got type {}: {shown}",
                value.type_of()
            ))
            .into())
    }

    /// promptfoo's `isGradingResult`, and what it holds when it is one.
    fn grading_result(&mut self, object: &JsObject) -> JsResult<Option<Returned>> {
        let mut get = |key: &str| object.get(JsString::from(key), &mut self.context);
        let (pass, score, reason) = (get("pass")?, get("score")?, get("reason")?);
        let (Some(pass), Some(score), Some(reason)) = (pass.as_boolean(), score.as_number(), reason.as_string()) else {
            return Ok(None);
        };
        for (key, allowed) in [
            ("namedScores", &["undefined", "object"][..]),
            ("namedScoreWeights", &["undefined", "object"]),
            ("tokensUsed", &["undefined", "object"]),
            ("assertion", &["undefined", "object"]),
            ("comment", &["undefined", "string"]),
        ] {
            if !allowed.contains(&get(key)?.type_of()) {
                return Ok(None);
            }
        }
        let components = get("componentResults")?;
        if !components.is_undefined() && !components.as_object().is_some_and(|o| o.is_array()) {
            return Ok(None);
        }
        Ok(Some(Returned::Grading { pass, score, reason: reason.to_std_string_escaped() }))
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
                let frames: Vec<&str> = stack.lines().filter(|line| !line.contains(MODULES_NAME)).collect();
                let stack = frames.join("\n");
                if stack.starts_with(&headline) { stack } else { format!("{headline}\n{stack}") }
            }
            None => headline,
        };
        Returned::Threw { message, stack: stack.trim_end().to_owned() }
    }

    /// `String(value)`, or a description when that throws.
    fn string_of(&mut self, value: &JsValue) -> String {
        match value.to_string(&mut self.context) {
            Ok(text) => text.to_std_string_escaped(),
            Err(_) => format!("a thrown {}", value.type_of()),
        }
    }
}

/// `object.name(...args)`.
fn call_method(object: &JsObject, name: &str, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let method = object.get(JsString::from(name), context)?;
    let method = method
        .as_callable()
        .and_then(JsFunction::from_object)
        .ok_or_else(|| JsNativeError::typ().with_message(format!("no method `{name}`")))?;
    method.call(&JsValue::from(object.clone()), args, context)
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
        ["export ", "export{", "export*", "import ", "import{", "import\"", "import'", "import*"]
            .iter()
            .any(|start| line.starts_with(start))
    })
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
