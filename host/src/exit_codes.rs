//! The exit codes of the `assay` binary.

/// Everything ran and passed (flaky cases pass unless `--fail-on-flaky`).
pub const OK: u8 = 0;

/// Some check or case failed or errored.
pub const FAILED: u8 = 1;

/// The invocation was bad: unknown flags, unreadable configuration, no test
/// files found.
pub const USAGE: u8 = 2;
