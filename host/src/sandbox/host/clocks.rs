//! The clocks a plugin sees through `wasi:clocks`: real time at millisecond
//! resolution by default (finer clocks help timing side channels and help
//! nothing a matcher does), or, for a `deterministic` plugin, clocks that
//! stand still and timers that fire at once, so that the same inputs give
//! the same verdict in the same time however the machine is loaded.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;
use wasmtime_wasi::p2::{DynPollable, Pollable, subscribe};

/// The resolution of the clocks a plugin sees.
const RESOLUTION: Duration = Duration::from_millis(1);

/// The time a deterministic plugin sees: 1,000,000,000 s after the epoch
/// (2001-09-09), standing still.
pub const FIXED_WALL_CLOCK_SECS: u64 = 1_000_000_000;

/// Real time, rounded down to [`RESOLUTION`].
pub(crate) struct Coarse;

impl Coarse {
    /// A monotonic clock counting from now.
    pub(crate) fn monotonic() -> CoarseMonotonic {
        CoarseMonotonic { start: Instant::now() }
    }
}

fn round_down(time: Duration) -> Duration {
    let step = RESOLUTION.as_nanos();
    Duration::from_nanos(u64::try_from(time.as_nanos() / step * step).unwrap_or(u64::MAX))
}

impl wasmtime_wasi::HostWallClock for Coarse {
    fn resolution(&self) -> Duration {
        RESOLUTION
    }

    fn now(&self) -> Duration {
        round_down(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default())
    }
}

/// A monotonic clock of [`RESOLUTION`].
pub(crate) struct CoarseMonotonic {
    start: Instant,
}

impl wasmtime_wasi::HostMonotonicClock for CoarseMonotonic {
    fn resolution(&self) -> u64 {
        RESOLUTION.as_nanos() as u64
    }

    fn now(&self) -> u64 {
        round_down(self.start.elapsed()).as_nanos() as u64
    }
}

/// A clock that never moves.
pub(crate) struct Fixed;

impl wasmtime_wasi::HostWallClock for Fixed {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::from_secs(FIXED_WALL_CLOCK_SECS)
    }
}

impl wasmtime_wasi::HostMonotonicClock for Fixed {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }

    fn now(&self) -> u64 {
        0
    }
}

/// Replaces `wasi:clocks/monotonic-clock` for a deterministic plugin: the
/// clock stands at zero, and every timer is ready at once (a sleep takes no
/// time), so a plugin that sleeps is as deterministic as one that does not.
pub(crate) fn link_virtual_timers<T: WasiView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let linked = monotonic_clock::add_to_linker::<T, VirtualTimers>(linker, |state| VirtualClock(state.ctx().table));
    linker.allow_shadowing(false);
    linked
}

/// The monotonic clock of a deterministic plugin (see
/// [`link_virtual_timers`]).
struct VirtualTimers;

impl HasData for VirtualTimers {
    type Data<'a> = VirtualClock<'a>;
}

/// The view of a store the virtual clock needs: its resource table.
struct VirtualClock<'a>(&'a mut ResourceTable);

/// A timer that has already fired.
struct Fired;

#[wasmtime_wasi::async_trait]
impl Pollable for Fired {
    async fn ready(&mut self) {}
}

fn fired(table: &mut ResourceTable) -> wasmtime::Result<Resource<DynPollable>> {
    let timer = table.push(Fired)?;
    subscribe(table, timer)
}

impl monotonic_clock::Host for VirtualClock<'_> {
    fn now(&mut self) -> wasmtime::Result<monotonic_clock::Instant> {
        Ok(0)
    }

    fn resolution(&mut self) -> wasmtime::Result<monotonic_clock::Duration> {
        Ok(1_000_000_000)
    }

    fn subscribe_instant(&mut self, _when: monotonic_clock::Instant) -> wasmtime::Result<Resource<DynPollable>> {
        fired(self.0)
    }

    fn subscribe_duration(&mut self, _duration: monotonic_clock::Duration) -> wasmtime::Result<Resource<DynPollable>> {
        fired(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime_wasi::{HostMonotonicClock, HostWallClock};

    #[test]
    fn coarse_clocks_have_millisecond_resolution() {
        assert_eq!(Coarse.resolution(), Duration::from_millis(1));
        assert_eq!(Coarse.now().subsec_nanos() % 1_000_000, 0);
        let monotonic = Coarse::monotonic();
        std::thread::sleep(Duration::from_millis(3));
        let now = monotonic.now();
        assert_eq!(now % 1_000_000, 0);
        assert!(now >= 3_000_000, "{now}");
        assert_eq!(monotonic.resolution(), 1_000_000);
    }
}
