//! The `types` interface: it declares types and no functions, but a
//! component that imports it still needs it linked, in the version it
//! imports.

use crate::sandbox::bindings::matcher_0_2::assay::plugin::types::Host;
use wasmtime::component::{HasData, Linker};

/// Links `types`, which has nothing to call.
pub(crate) struct TypesHost;

impl HasData for TypesHost {
    type Data<'a> = TypesHost;
}

impl Host for TypesHost {}

impl crate::sandbox::bindings::matcher_0_3::assay::plugin::types::Host for TypesHost {}

/// Links `assay:plugin/types@0.1.0`. Its bindings reuse 0.2.0's Rust types
/// (see `sandbox/bindings.rs`), so none are generated to link it with: it
/// is an instance with nothing in it, as the generated linking makes.
pub(crate) fn link_0_1<T: 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.instance("assay:plugin/types@0.1.0")?;
    Ok(())
}
