//! The `types` interface: it declares types and no functions, but a
//! component that imports it still needs it linked.

use crate::sandbox::bindings::matcher::assay::plugin::types::Host;
use wasmtime::component::HasData;

/// Links `types`, which has nothing to call.
pub(crate) struct TypesHost;

impl HasData for TypesHost {
    type Data<'a> = TypesHost;
}

impl Host for TypesHost {}
