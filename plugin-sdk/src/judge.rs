//! Ask the language-model judge the user configured (needs the `judge`
//! grant). A call fails with a [`CapabilityError`]: decide by its variant
//! (`NotConfigured` when the user set up no judge). Natively, tests install
//! their own judge with [`set_native`].

use crate::CapabilityError;
#[cfg(not(target_arch = "wasm32"))]
use std::cell::RefCell;

/// A judge used by native builds (unit tests).
#[cfg(not(target_arch = "wasm32"))]
pub type NativeJudge = Box<dyn Fn(&str) -> Result<String, CapabilityError>>;

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static NATIVE: RefCell<Option<NativeJudge>> = const { RefCell::new(None) };
}

/// Sends one prompt to the judge and returns its answer, or why there is
/// none.
pub fn complete(prompt: &str) -> Result<String, CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::matcher::assay::plugin::judge::complete(prompt)
            .map_err(|e| crate::capability::from_wit(crate::Capability::Judge, e))
    }
    #[cfg(not(target_arch = "wasm32"))]
    NATIVE.with(|judge| match &*judge.borrow() {
        Some(judge) => judge(prompt),
        None => Err(CapabilityError::Failed("no judge in native builds: call judge::set_native first".to_owned())),
    })
}

/// Installs the judge that [`complete`] uses on this thread in native builds.
#[cfg(not(target_arch = "wasm32"))]
pub fn set_native(judge: NativeJudge) {
    NATIVE.with(|slot| *slot.borrow_mut() = Some(judge));
}
