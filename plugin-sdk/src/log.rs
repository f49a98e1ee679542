//! Log lines from a plugin to the host (granted by default, capped by the
//! host). Natively, lines go to standard error.

/// How much a log line matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Very detailed tracing.
    Trace,
    /// Debugging detail.
    Debug,
    /// Normal information.
    Info,
    /// Something looks wrong.
    Warn,
    /// Something failed.
    Error,
}

/// Writes one line to the host's log.
pub fn emit(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    {
        use crate::bindings::matcher::assay::plugin::log;
        let level = match level {
            Level::Trace => log::Level::Trace,
            Level::Debug => log::Level::Debug,
            Level::Info => log::Level::Info,
            Level::Warn => log::Level::Warn,
            Level::Error => log::Level::Error,
        };
        log::emit(level, message);
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level:?}] {message}");
}

/// Writes an `info` line.
pub fn info(message: &str) {
    emit(Level::Info, message);
}

/// Writes a `warn` line.
pub fn warn(message: &str) {
    emit(Level::Warn, message);
}
