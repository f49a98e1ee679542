//! [`WasiState`]: WASI as a guest sees it, linked with nothing granted. No
//! preopened directories, no environment, no arguments, no network (TCP,
//! UDP and name lookups refused, every socket address denied), empty stdin,
//! stdout and stderr into the guest's capped log, clocks of millisecond
//! resolution. A deterministic guest gets fixed clocks and seeded
//! randomness instead, so the same inputs always give the same verdicts.

use crate::sandbox::host::clocks;
use crate::sandbox::host::log::SharedLog;
use crate::sandbox::host::stdio::LogStream;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView};

/// The seed of a deterministic guest's randomness.
const DETERMINISTIC_SEED: u64 = 0x5eed;

/// One store's WASI context (made on first use) and resource table.
pub(crate) struct WasiState {
    deterministic: bool,
    ctx: Option<WasiCtx>,
    table: ResourceTable,
}

impl WasiState {
    /// WASI for a guest that is `deterministic` or not.
    pub(crate) fn new(deterministic: bool) -> Self {
        WasiState { deterministic, ctx: None, table: ResourceTable::new() }
    }

    /// What the guest's WASI calls see; its standard output and error go
    /// into `log`.
    pub(crate) fn view(&mut self, log: &SharedLog) -> WasiCtxView<'_> {
        let deterministic = self.deterministic;
        let ctx = self.ctx.get_or_insert_with(|| nothing_granted(deterministic, log));
        WasiCtxView { ctx, table: &mut self.table }
    }

    /// Prepares for the next call: a deterministic guest gets a fresh
    /// context, so the same inputs see the same clock and the same random
    /// numbers however many calls came before.
    pub(crate) fn start_call(&mut self) {
        if self.deterministic {
            self.ctx = None;
        }
    }
}

fn nothing_granted(deterministic: bool, log: &SharedLog) -> WasiCtx {
    let mut builder = WasiCtx::builder();
    // The defaults already deny these; say so, so that a change of
    // defaults cannot grant them.
    builder
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }))
        .stdout(LogStream::stdout(log.clone()))
        .stderr(LogStream::stderr(log.clone()));
    if deterministic {
        use rand::SeedableRng;
        builder
            .wall_clock(clocks::Fixed)
            .monotonic_clock(clocks::Fixed)
            .secure_random(rand::rngs::StdRng::seed_from_u64(DETERMINISTIC_SEED))
            .insecure_random(rand::rngs::StdRng::seed_from_u64(DETERMINISTIC_SEED))
            .insecure_random_seed(u128::from(DETERMINISTIC_SEED));
    } else {
        builder.wall_clock(clocks::Coarse).monotonic_clock(clocks::Coarse::monotonic());
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::host::log::LogState;

    #[test]
    fn only_a_deterministic_guest_starts_each_call_afresh() {
        let log = LogState::new(10, 1 << 10);
        for deterministic in [false, true] {
            let mut wasi = WasiState::new(deterministic);
            assert!(wasi.ctx.is_none(), "made on first use");
            let _ = wasi.view(log.shared());
            wasi.start_call();
            assert_eq!(wasi.ctx.is_none(), deterministic);
        }
    }
}
