//! Few-shot exemplars: a pool per direction and a seeded draw per item.
//!
//! The pool is the direction's training pairs (items of split `train` with a reference) when it
//! has any; else the direction's other items with a reference (not `train`), minus the item being
//! rewritten. An exemplar's target is its first reference. Each item's draw depends only on the
//! few-shot seed and the item's split and index, so it is the same in any run order, on resume,
//! and in another store holding the same data.

use super::template::Example;
use crate::store::Store;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Where the exemplars come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolKind {
    /// Training pairs of the direction.
    Train,
    /// No training pairs: the direction's other (test) items with a reference.
    OtherItems,
}

impl PoolKind {
    pub fn describe(self) -> &'static str {
        match self {
            PoolKind::Train => "training pairs of the direction (split train, first reference)",
            PoolKind::OtherItems => {
                "no training pairs: other items of the direction with a reference, never the item itself"
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub item_id: i64,
    pub source: String,
    pub target: String,
    pub context: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    pub kind: PoolKind,
    pub items: Vec<Candidate>,
}

impl Pool {
    /// The pool of a direction; `need_context` keeps only items with a context.
    pub fn of(store: &Store, direction_id: i64, need_context: bool) -> crate::store::Result<Pool> {
        let query = |train: bool| -> crate::store::Result<Vec<Candidate>> {
            let mut v: Vec<Candidate> = store
                .exemplars(direction_id, train)?
                .into_iter()
                .map(|e| Candidate { item_id: e.item_id, source: e.source, context: e.context, target: e.target })
                .collect();
            if need_context {
                v.retain(|c| c.context.as_deref().is_some_and(|x| !x.trim().is_empty()));
            }
            Ok(v)
        };
        let train = query(true)?;
        if !train.is_empty() {
            return Ok(Pool { kind: PoolKind::Train, items: train });
        }
        Ok(Pool { kind: PoolKind::OtherItems, items: query(false)? })
    }

    /// `shots` exemplars for the item (`split`, `idx`, id `item_id`), drawn with `seed`.
    /// Fewer when the pool is smaller.
    pub fn draw(&self, seed: u64, item_id: i64, split: &str, idx: i64, shots: usize) -> Vec<&Candidate> {
        let eligible: Vec<&Candidate> = self.items.iter().filter(|c| c.item_id != item_id).collect();
        let k = shots.min(eligible.len());
        let mut rng = ChaCha8Rng::seed_from_u64(item_seed(seed, split, idx));
        rand::seq::index::sample(&mut rng, eligible.len(), k).into_iter().map(|i| eligible[i]).collect()
    }
}

/// The exemplars as the template renders them.
pub fn examples(chosen: &[&Candidate]) -> Vec<Example> {
    chosen
        .iter()
        .map(|c| Example { source: c.source.clone(), target: c.target.clone(), context: c.context.clone() })
        .collect()
}

/// A stable 64-bit key of an item: its split and index (FNV-1a, then SplitMix64 with the seed).
pub fn item_seed(seed: u64, split: &str, idx: i64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in split.bytes().chain(idx.to_le_bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = seed ^ h;
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(train: bool) -> (Store, i64, Vec<i64>) {
        let mut store = Store::open_in_memory().unwrap();
        let mut w = store.writer().unwrap();
        let d = w.dataset("d", "sentiment", "").unwrap();
        let x = w.direction(d, "neg", "pos").unwrap();
        let mut test = Vec::new();
        for i in 1..=6 {
            let id = w.item(x, "test", i, &format!("bad {i}"), None).unwrap();
            w.reference(id, &format!("good {i}"), "").unwrap();
            test.push(id);
        }
        // One item without a reference is never an exemplar.
        test.push(w.item(x, "test", 7, "bad 7", None).unwrap());
        if train {
            for i in 1..=5 {
                let id = w.item(x, "train", i, &format!("train bad {i}"), None).unwrap();
                w.reference(id, &format!("train good {i}"), "").unwrap();
            }
        }
        w.commit().unwrap();
        (store, x, test)
    }

    #[test]
    fn train_pairs_first_else_other_items() {
        let (store, x, test) = store_with(true);
        let pool = Pool::of(&store, x, false).unwrap();
        assert_eq!((pool.kind, pool.items.len()), (PoolKind::Train, 5));
        let drawn = pool.draw(7, test[0], "test", 1, 3);
        assert_eq!(drawn.len(), 3);
        assert!(drawn.iter().all(|c| c.source.starts_with("train bad") && c.target.starts_with("train good")));

        let (store, x, test) = store_with(false);
        let pool = Pool::of(&store, x, false).unwrap();
        assert_eq!((pool.kind, pool.items.len()), (PoolKind::OtherItems, 6));
        for (k, &id) in test.iter().enumerate().take(6) {
            let drawn = pool.draw(7, id, "test", k as i64 + 1, 3);
            assert_eq!(drawn.len(), 3);
            assert!(drawn.iter().all(|c| c.item_id != id), "never the item itself");
            let ids: std::collections::HashSet<i64> = drawn.iter().map(|c| c.item_id).collect();
            assert_eq!(ids.len(), 3, "distinct exemplars");
        }
        assert_eq!(pool.draw(7, test[0], "test", 1, 10).len(), 5, "fewer when the pool is small");
    }

    #[test]
    fn seeded_and_stable() {
        let (store, x, test) = store_with(false);
        let pool = Pool::of(&store, x, false).unwrap();
        let ids = |seed| pool.draw(seed, test[2], "test", 3, 3).iter().map(|c| c.item_id).collect::<Vec<_>>();
        assert_eq!(ids(1), ids(1));
        let seeds: std::collections::HashSet<Vec<i64>> = (0..20).map(ids).collect();
        assert!(seeds.len() > 5, "other seeds draw other exemplars: {seeds:?}");
        // Items get their own draws.
        let a: Vec<i64> = pool.draw(1, test[0], "test", 1, 3).iter().map(|c| c.item_id).collect();
        let b: Vec<i64> = pool.draw(1, test[1], "test", 2, 3).iter().map(|c| c.item_id).collect();
        assert_ne!(a, b);
    }
}
