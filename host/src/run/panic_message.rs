//! What a panic in a case's work says, for the error it is reported as:
//! the runner's case tasks and a group's run both report their panics so.

/// The message of a panic, from what it was raised with.
pub(super) fn panic_payload_message(payload: Box<dyn std::any::Any + Send>) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    format!("it panicked: {text}")
}
