//! The `assay` command: parse the command line, run the command, map the
//! result to an exit code (see `assay::exit_codes`).

use std::process::ExitCode;

/// mimalloc rather than glibc's malloc: a run hands most of what it
/// allocates from thread to thread (a case is read on a reader thread, run
/// on a case thread, reported on the main thread), which glibc's arenas
/// serve slowly: the 10,000-case run takes ~17% less time (the book,
/// "Performance"). Without transparent huge pages (`no_thp`), which would
/// double a run's peak memory on a machine that enables them always.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in the `mimalloc.h` of the sources
/// libmimalloc-sys 0.1.49 builds (mimalloc v3; v2 numbers it the same).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Memory mimalloc frees goes back to the system at once, not after its
/// default delay (a second): compiling a component or loading it from the
/// cache allocates and frees megabytes at a time, which would otherwise
/// count in a short run's peak (the book, "Performance"), for no time
/// measured at 10,000 cases.
fn return_freed_memory_at_once() {
    // SAFETY: sets an option mimalloc reads on each purge; called first
    // thing in `main`, before any other thread of assay's starts.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
}

fn main() -> ExitCode {
    return_freed_memory_at_once();
    assay::command_line()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_set_is_the_purge_delay() {
        // SAFETY: reads and sets an option of the allocator of this test
        // binary, which is mimalloc too.
        let get = || unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        // mimalloc v3's default purge delay (ms); its neighbours' defaults
        // differ (eager_commit_delay 1, use_numa_nodes 0).
        assert_eq!(get(), 1000);
        return_freed_memory_at_once();
        assert_eq!(get(), 0);
    }
}
