//! The store's resource limiter: memory and table growth capped over all of
//! an instance's memories and tables together, and counts of instances,
//! memories and tables capped per store.

use crate::errors::Fault;
use wasmtime::ResourceLimiter;

/// The most table elements an instance may have, over all its tables.
const MAX_TABLE_ELEMENTS: usize = 100_000;

/// The most core instances, memories and tables one store may create: a
/// component of any toolchain seen so far (componentize-py's included)
/// needs far fewer, and a cap keeps a hostile component from multiplying
/// them.
const MAX_INSTANCES: usize = 64;
const MAX_MEMORIES: usize = 16;
const MAX_TABLES: usize = 32;

/// Enforces the memory and table limits over all of an instance's memories
/// and tables together, and remembers a refusal, so that the trap it causes
/// can be reported as a memory or table fault. (A per-memory limit would
/// let a module with many memories, or many core instances, multiply it.)
pub(crate) struct MemoryLimiter {
    limit: usize,
    /// Bytes of linear memory granted so far, over every memory.
    used: usize,
    /// Table elements granted so far, over every table.
    elements: usize,
    exceeded: Option<Fault>,
}

impl MemoryLimiter {
    /// A limiter granting at most `limit` bytes of memory.
    pub(crate) fn new(limit: usize) -> Self {
        MemoryLimiter { limit, used: 0, elements: 0, exceeded: None }
    }

    /// The fault of the growth it refused, if it refused one.
    pub(crate) fn exceeded(&self) -> Option<&Fault> {
        self.exceeded.as_ref()
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let total = self.used.saturating_sub(current).saturating_add(desired);
        if total > self.limit {
            self.exceeded = Some(Fault::Memory { limit: self.limit, requested: total });
            wasmtime::bail!("memory limit exceeded");
        }
        self.used = total;
        Ok(true)
    }

    fn table_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let total = self.elements.saturating_sub(current).saturating_add(desired);
        if total > MAX_TABLE_ELEMENTS {
            self.exceeded = Some(Fault::Table { limit: MAX_TABLE_ELEMENTS, requested: total });
            wasmtime::bail!("table limit exceeded");
        }
        self.elements = total;
        Ok(true)
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memories_and_tables_are_capped_together() {
        let mut limiter = MemoryLimiter::new(64 << 20);
        // Three memories of 20 MiB fit, a fourth does not, however small
        // each is on its own.
        for _ in 0..3 {
            assert!(limiter.memory_growing(0, 20 << 20, None).unwrap());
        }
        assert!(limiter.memory_growing(0, 20 << 20, None).is_err());
        assert_eq!(limiter.exceeded, Some(Fault::Memory { limit: 64 << 20, requested: 80 << 20 }));
        // Growing one memory counts only what it adds.
        let mut limiter = MemoryLimiter::new(64 << 20);
        assert!(limiter.memory_growing(0, 30 << 20, None).unwrap());
        assert!(limiter.memory_growing(30 << 20, 60 << 20, None).unwrap());
        assert!(limiter.memory_growing(60 << 20, 65 << 20, None).is_err());

        let mut limiter = MemoryLimiter::new(64 << 20);
        assert!(limiter.table_growing(0, 60_000, None).unwrap());
        assert!(limiter.table_growing(0, 40_000, None).unwrap());
        assert!(limiter.table_growing(40_000, 40_001, None).is_err());
        assert_eq!(limiter.exceeded, Some(Fault::Table { limit: MAX_TABLE_ELEMENTS, requested: 100_001 }));
    }
}
