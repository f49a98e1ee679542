//! The one `{{…}}` template engine: Jinja, as the `minijinja` crate runs
//! it, for every template assay fills. Each mode is a type parsed once,
//! when its file is read, and rendered per case (never parsed again), in
//! an environment of its own built once:
//!
//! - [`NunjucksTemplate`]: promptfoo's prompts, assertion values and metric
//!   names, rendered as promptfoo's Nunjucks renders them (tags, loops and
//!   filters; values printed as JavaScript prints them; undefined as
//!   nothing), up to [`MAX_RENDERED_BYTES`];
//! - [`FieldTemplate`] and [`ValueTemplate`]: a suite's `text`, `expected`
//!   values and setup `command`, filled from one spec line (a string that
//!   is exactly `{{field}}` keeps the field's type; a field the line lacks
//!   is a [`FillError::Missing`] naming it);
//! - `RequestTemplate` (crate-private): the `url`, header values and `body`
//!   of an http connection, each value written as JSON, as text or
//!   percent-encoded by where it lands, never spliced as raw text.
//!
//! Every render runs on fuel, which bounds the time and memory a template
//! may take (a loop in a loop, a string doubled by `{% set %}`).
//!
//! - `engine.rs`: what the modes share: an environment's settings, a
//!   template compiled in its own copy of one, rendering under a cap, and
//!   engine errors as messages naming the line and the fix;
//! - `value.rs`: JSON into the engine's values and back out, numbers
//!   written as JavaScript or as the JSON had them;
//! - `nunjucks.rs`, `fields.rs`, `request.rs`: the three modes.

mod engine;
mod fields;
mod filters;
mod nunjucks;
mod request;
mod value;

pub use engine::is_template;
pub use fields::{FieldTemplate, FillError, ValueTemplate};
pub use nunjucks::{MAX_RENDERED_BYTES, NunjucksTemplate};
pub use request::RequestFields;

/// JSON as JavaScript's `JSON.stringify` writes it, numbers included (what
/// promptfoo makes of an answer that is not text).
pub fn json_stringify(value: &serde_json::Value) -> String {
    value::stringify(value)
}
pub(crate) use request::{Encoding, RequestTemplate};
