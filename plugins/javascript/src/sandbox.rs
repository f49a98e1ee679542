//! The globals an assertion finds beside the language's built-ins, all
//! native functions (a fresh context per assertion must not parse a prelude:
//! Boa takes ~1 ms per 5 KB of source): `console` (to the host's log),
//! timers in virtual time, a fixed `Math.random` sequence, and `require`,
//! `process` and `fetch`, which throw an error naming what a sandbox cannot
//! give.
//!
//! The timers and the random sequence live in this thread's state, which
//! [`reset`] empties for every assertion (a component runs one assertion at
//! a time).

use assay_plugin_sdk::log::{Level, emit};
use boa_engine::object::ObjectInitializer;
use boa_engine::object::builtins::{JsPromise, JsProxy};
use boa_engine::property::Attribute;
use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction, js_string};
use std::cell::{Cell, RefCell};

/// The seed of `Math.random`'s sequence.
const SEED: u32 = 0x2545_f491;

/// Timers waiting to fire, in virtual time.
#[derive(Default)]
struct Timers {
    /// The last timer's id.
    last_id: u32,
    /// The virtual time, in milliseconds since the start.
    now: f64,
    /// The pending timers.
    pending: Vec<Timer>,
}

struct Timer {
    id: u32,
    at: f64,
    callback: JsObject,
    args: Vec<JsValue>,
}

thread_local! {
    static TIMERS: RefCell<Timers> = RefCell::new(Timers::default());
    static RANDOM: Cell<u32> = const { Cell::new(SEED) };
}

/// Forgets the timers and restarts the random sequence: before and after
/// each assertion (which also lets the timers' callbacks be collected).
pub fn reset() {
    // At a thread's end (a test's; an engine kept in a thread local is
    // dropped then) these may be gone already: nothing is left to reset.
    let _ = TIMERS.try_with(|timers| *timers.borrow_mut() = Timers::default());
    let _ = RANDOM.try_with(|random| random.set(SEED));
}

/// Defines the globals in `context`.
pub fn install(context: &mut Context) -> JsResult<()> {
    let hidden = Attribute::WRITABLE | Attribute::CONFIGURABLE;
    for (name, length, function) in [
        ("require", 1, NativeFunction::from_fn_ptr(require)),
        ("fetch", 1, NativeFunction::from_fn_ptr(fetch)),
        ("setTimeout", 2, NativeFunction::from_fn_ptr(set_timeout)),
        ("clearTimeout", 1, NativeFunction::from_fn_ptr(clear_timeout)),
        ("setImmediate", 1, NativeFunction::from_fn_ptr(set_immediate)),
        ("clearImmediate", 1, NativeFunction::from_fn_ptr(clear_timeout)),
        ("queueMicrotask", 1, NativeFunction::from_fn_ptr(queue_microtask)),
    ] {
        context.register_global_callable(JsString::from(name), length, function)?;
    }
    let process = JsProxy::builder(JsObject::with_null_proto())
        .get(process_get)
        .set(process_set)
        .has(|_, _, _| Ok(false.into()))
        .build(context)?;
    context.register_global_property(js_string!("process"), process, hidden)?;
    let mut console = ObjectInitializer::new(context);
    for (name, level) in [
        ("log", Level::Info),
        ("info", Level::Info),
        ("debug", Level::Debug),
        ("trace", Level::Trace),
        ("warn", Level::Warn),
        ("error", Level::Error),
    ] {
        let function = NativeFunction::from_copy_closure(move |_, args, context| log(level, args, context));
        console.function(function, JsString::from(name), 0);
    }
    let console = console.build();
    context.register_global_property(js_string!("console"), console, hidden)?;
    let math = context.intrinsics().objects().math();
    let random = NativeFunction::from_fn_ptr(random).to_js_function(context.realm());
    math.set(js_string!("random"), random, true, context)?;
    Ok(())
}

/// The error of a thing a sandbox cannot give.
fn denied(what: &str, why: &str) -> boa_engine::JsError {
    JsNativeError::error().with_message(format!("{what} is not available: assertions run sandboxed{why}")).into()
}

fn require(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let name = args.first().cloned().unwrap_or_default().to_string(context)?.to_std_string_escaped();
    Err(denied(&format!("require('{name}')"), ""))
}

fn fetch(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Err(denied("fetch", " (no network)"))
}

/// Why a property of `process` is not available, where more can be said.
fn process_why(key: &str) -> &'static str {
    match key {
        "env" => " (no environment variables)",
        "exit" | "kill" | "abort" => " (an assertion cannot end the run)",
        "cwd" | "chdir" => " (no file system)",
        "argv" | "execArgv" | "execPath" => " (no command line)",
        _ => "",
    }
}

/// `process.KEY`: an error for every key but `mainModule`, which promptfoo's
/// own `process` shim gives for `process.mainModule.require(…)`.
fn process_get(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let key = args.get(1).cloned().unwrap_or_default();
    if key.is_symbol() {
        return Ok(JsValue::undefined());
    }
    let key = key.to_string(context)?.to_std_string_escaped();
    if key == "mainModule" {
        let require = context.global_object().get(js_string!("require"), context)?;
        let main = ObjectInitializer::new(context).property(js_string!("require"), require, Attribute::all()).build();
        return Ok(main.into());
    }
    Err(denied(&format!("process.{key}"), process_why(&key)))
}

fn process_set(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let key = args.get(1).cloned().unwrap_or_default();
    let key = if key.is_symbol() { "[symbol]".to_owned() } else { key.to_string(context)?.to_std_string_escaped() };
    Err(denied(&format!("process.{key}"), process_why(&key)))
}

/// `console.*`: one line to the host's log (capped there); strings as
/// they are, other values as JSON where they have one.
fn log(level: Level, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let mut parts = Vec::with_capacity(args.len());
    for arg in args {
        let shown = match arg.as_string() {
            Some(text) => text.to_std_string_escaped(),
            None => match arg.to_json(context) {
                Ok(Some(json)) => json.to_string(),
                _ => arg.to_string(context).map(|s| s.to_std_string_escaped()).unwrap_or_else(|_| arg.type_of().into()),
            },
        };
        parts.push(shown);
    }
    emit(level, &parts.join(" "));
    Ok(JsValue::undefined())
}

/// `Math.random()`: mulberry32 from a fixed seed, the same sequence in every
/// assertion, so that a verdict does not depend on chance.
fn random(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let state = RANDOM.with(|random| {
        let state = random.get().wrapping_add(0x6d2b_79f5);
        random.set(state);
        state
    });
    let mut t = (state ^ (state >> 15)).wrapping_mul(1 | state);
    t = (t.wrapping_add((t ^ (t >> 7)).wrapping_mul(61 | t))) ^ t;
    Ok(JsValue::from(f64::from(t ^ (t >> 14)) / 4_294_967_296.0))
}

fn set_timeout(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let Some(callback) = args.first().and_then(JsValue::as_callable) else {
        return Err(JsNativeError::typ().with_message("setTimeout needs a function").into());
    };
    let delay = match args.get(1) {
        Some(delay) => delay.to_number(context)?,
        None => 0.0,
    };
    let delay = if delay.is_finite() && delay > 0.0 { delay } else { 0.0 };
    let rest = args.get(2..).unwrap_or_default().to_vec();
    let id = TIMERS.with(|timers| {
        let mut timers = timers.borrow_mut();
        timers.last_id += 1;
        let (id, at) = (timers.last_id, timers.now + delay);
        timers.pending.push(Timer { id, at, callback, args: rest });
        id
    });
    Ok(JsValue::from(id))
}

fn set_immediate(this: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let mut args = args.to_vec();
    args.insert(1.min(args.len()), JsValue::from(0));
    set_timeout(this, &args, context)
}

fn clear_timeout(_: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    if let Some(id) = args.first().and_then(JsValue::as_number) {
        TIMERS.with(|timers| timers.borrow_mut().pending.retain(|timer| f64::from(timer.id) != id));
    }
    Ok(JsValue::undefined())
}

fn queue_microtask(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let Some(callback) = args.first().and_then(JsValue::as_callable) else {
        return Err(JsNativeError::typ().with_message("queueMicrotask needs a function").into());
    };
    let callback = boa_engine::object::builtins::JsFunction::from_object(callback)
        .ok_or_else(|| JsNativeError::typ().with_message("queueMicrotask needs a function"))?;
    JsPromise::resolve(JsValue::undefined(), context)?.then(Some(callback), None, context)?;
    Ok(JsValue::undefined())
}

/// The time of the earliest pending timer, if any.
pub fn next_timer() -> Option<f64> {
    TIMERS.with(|timers| earliest(&timers.borrow()).map(|(_, at)| at))
}

/// Fires the earliest pending timer, moving the virtual time to it.
pub fn fire_timer(context: &mut Context) -> JsResult<()> {
    let timer = TIMERS.with(|timers| {
        let mut timers = timers.borrow_mut();
        let (index, at) = earliest(&timers)?;
        timers.now = at;
        Some(timers.pending.remove(index))
    });
    if let Some(timer) = timer {
        timer.callback.call(&JsValue::undefined(), &timer.args, context)?;
    }
    Ok(())
}

fn earliest(timers: &Timers) -> Option<(usize, f64)> {
    let (index, timer) =
        timers.pending.iter().enumerate().min_by(|(_, a), (_, b)| a.at.total_cmp(&b.at).then(a.id.cmp(&b.id)))?;
    Some((index, timer.at))
}
