//! How the sandbox's wasmtime engines are configured: the component model,
//! epoch interruption, fuel or not, and the pooling allocator's sizes. One
//! function, so that the engines of a run (`engine.rs`) and the artifacts
//! compiled ahead for the binary (`precompiled.rs`) agree.

use wasmtime::{Config, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How many freed slots are decommitted together.
const DECOMMIT_BATCH: usize = 64;

/// The largest linear memory a pooled instance can have. A plugin configured
/// with more memory than this still gets it: the engine then allocates on
/// demand instead (see [`crate::sandbox::Runtime::new`]).
pub(super) const POOLED_MEMORY_MAX: usize = 1 << 30;

/// An engine's configuration: with fuel metering or not, and with a pool of
/// `pool` component instance slots or allocating on demand.
pub(super) fn config(fuel: bool, pool: Option<u32>) -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true).epoch_interruption(true).consume_fuel(fuel);
    if let Some(instances) = pool {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(instances)
            // Every instance's store keeps one fiber stack for its async
            // calls.
            .total_stacks(instances)
            .total_core_instances(2048)
            .total_memories(1024)
            .total_tables(1024)
            .max_memories_per_component(8)
            .max_tables_per_component(8)
            .max_core_instances_per_component(64)
            .max_component_instance_size(1 << 20)
            .max_core_instance_size(1 << 20)
            .table_elements(100_000)
            .max_memory_size(POOLED_MEMORY_MAX)
            // Freed slots are decommitted in batches: one madvise, and one
            // round of TLB shootdowns on the other cores, per batch.
            .decommit_batch_size(DECOMMIT_BATCH);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

