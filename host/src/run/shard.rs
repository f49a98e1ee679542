//! `--shard K/N`: one of N disjoint parts of a run's cases, so that N
//! machines (a CI job matrix, a Kubernetes Indexed Job) each run one and
//! `assay merge` puts the results together (cargo-nextest's `--partition
//! hash:K/N`).
//!
//! A case belongs to shard K when the stable hash of its id modulo N is
//! K − 1. The hash is FNV-1a, 64 bits, of the id's UTF-8 bytes: fixed by
//! its specification (unlike `DefaultHasher`, which may change between
//! Rust releases and is seeded per process), so every machine and every
//! version of assay puts a case in the same shard. Shards are disjoint and
//! cover every case, and a case keeps its shard when others are added or
//! removed: its shard depends on its id alone.

use crate::errors::ShardError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One shard of N: `index` counts from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, from 1 to `total`.
    pub index: u32,
    /// How many shards there are.
    pub total: u32,
}

/// The FNV-1a 64-bit hash of `bytes` (offset basis 0xcbf29ce484222325,
/// prime 0x100000001b3): the stable hash shards are cut by.
pub fn stable_hash(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(PRIME))
}

impl Shard {
    /// Shard `index` of `total`, or why there is no such shard.
    pub fn new(index: u32, total: u32) -> Result<Shard, ShardError> {
        let text = || format!("{index}/{total}");
        if total == 0 {
            return Err(ShardError::NoShards { text: text() });
        }
        if index == 0 || index > total {
            return Err(ShardError::OutOfRange { text: text(), total });
        }
        Ok(Shard { index, total })
    }

    /// The shard (1-based) of `total` that the case `id` belongs to.
    pub fn index_of(id: &str, total: u32) -> u32 {
        (stable_hash(id.as_bytes()) % u64::from(total.max(1))) as u32 + 1
    }

    /// Whether the case `id` belongs to this shard.
    pub fn contains(&self, id: &str) -> bool {
        Shard::index_of(id, self.total) == self.index
    }

    /// The items of `items` whose id (`id_of`) belongs to this shard, in
    /// their order.
    pub fn select<T, Id: AsRef<str>>(&self, items: Vec<T>, id_of: impl Fn(&T) -> Id) -> Vec<T> {
        items.into_iter().filter(|item| self.contains(id_of(item).as_ref())).collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    /// `K/N`, e.g. `2/4`.
    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let not_a_shard = || ShardError::NotAShard { text: text.to_owned() };
        let (index, total) = text.trim().split_once('/').ok_or_else(not_a_shard)?;
        let number = |part: &str| part.trim().parse::<u32>().map_err(|_| not_a_shard());
        Shard::new(number(index)?, number(total)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_hash_is_fnv_1a_64() {
        // The published test vectors of FNV-1a 64.
        assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(stable_hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn k_of_n_parses_and_anything_else_says_what_a_shard_is() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard { index: 2, total: 4 });
        assert_eq!("1/1".parse::<Shard>().unwrap().to_string(), "1/1");
        let error = |text: &str| text.parse::<Shard>().unwrap_err().to_string();
        assert_eq!(error("0/3"), "`0/3` is not a shard: K counts from 1 to N (1/3 to 3/3)");
        assert_eq!(error("4/3"), "`4/3` is not a shard: K counts from 1 to N (1/3 to 3/3)");
        assert_eq!(error("1/0"), "`1/0` is not a shard: there must be at least one shard (1/1)");
        for bad in ["a/b", "2", "", "1/2/3", "-1/3", "1.5/3", "/3"] {
            assert_eq!(error(bad), format!("`{bad}` is not a shard: write K/N, e.g. 2/4 for the second of four"));
        }
    }

    proptest! {
        #[test]
        fn every_id_is_in_exactly_one_shard_and_keeps_it(ids in prop::collection::vec(".{0,12}", 1..40), total in 1u32..9) {
            for id in &ids {
                let holders: Vec<u32> = (1..=total).filter(|&k| Shard { index: k, total }.contains(id)).collect();
                prop_assert_eq!(holders.len(), 1);
                prop_assert_eq!(holders[0], Shard::index_of(id, total));
            }
            let selected: usize = (1..=total).map(|k| Shard { index: k, total }.select(ids.clone(), String::clone).len()).sum();
            prop_assert_eq!(selected, ids.len());
        }
    }
}
