//! `--shard I/N`: the I-th of N parts of a direction's items, for work split across machines.
//!
//! The split is by the item's stored position: item `idx` of its split (test, dev, ...) belongs
//! to shard `idx mod N + 1`. Positions come from the imported files, so every machine that
//! imported the same data splits it the same way, whatever the row ids of its store; items do
//! not move between shards when a run is limited (`--limit`) or resumed.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One part of N; `index` counts from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Shard {
    index: u32,
    count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad shard {given:?}: {why} (write I/N with 1 <= I <= N, e.g. 2/4)")]
pub struct ShardError {
    given: String,
    why: &'static str,
}

impl Shard {
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        let bad = |why| Err(ShardError { given: format!("{index}/{count}"), why });
        match (index, count) {
            (_, 0) => bad("N must be at least 1"),
            (0, _) => bad("I counts from 1"),
            (i, n) if i > n => bad("I is larger than N"),
            (index, count) => Ok(Shard { index, count }),
        }
    }

    pub fn index(self) -> u32 {
        self.index
    }

    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether the item at position `idx` of its split is in this shard.
    pub fn holds(self, idx: i64) -> bool {
        idx.rem_euclid(i64::from(self.count)) == i64::from(self.index - 1)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = |why| ShardError { given: s.to_owned(), why };
        let (i, n) = s.trim().split_once('/').ok_or_else(|| bad("no '/'"))?;
        let i: u32 = i.trim().parse().map_err(|_| bad("I is not a whole number"))?;
        let n: u32 = n.trim().parse().map_err(|_| bad("N is not a whole number"))?;
        Shard::new(i, n).map_err(|e| ShardError { given: s.to_owned(), why: e.why })
    }
}

impl TryFrom<String> for Shard {
    type Error = ShardError;
    fn try_from(s: String) -> Result<Shard, ShardError> {
        s.parse()
    }
}

impl From<Shard> for String {
    fn from(s: Shard) -> String {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let s: Shard = "2/4".parse().unwrap();
        assert_eq!((s.index(), s.count(), s.to_string()), (2, 4, "2/4".to_owned()));
        for bad in ["0/4", "5/4", "1/0", "x/4", "2", "2/-4", ""] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("1 <= I <= N"), "{bad}: {e}");
        }
        assert!("5/4".parse::<Shard>().unwrap_err().to_string().contains("I is larger than N"));
    }

    #[test]
    fn every_position_is_in_exactly_one_shard() {
        for n in 1..6u32 {
            for idx in 0..40i64 {
                let owners = (1..=n).filter(|&i| Shard::new(i, n).unwrap().holds(idx)).count();
                assert_eq!(owners, 1, "idx {idx} of {n}");
            }
        }
        assert!(Shard::new(1, 4).unwrap().holds(8) && Shard::new(3, 4).unwrap().holds(6));
    }

    #[test]
    fn serialized_as_text() {
        let s = Shard::new(3, 8).unwrap();
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"3/8\"");
        assert_eq!(serde_json::from_str::<Shard>("\"3/8\"").unwrap(), s);
        assert!(serde_json::from_str::<Shard>("\"9/8\"").is_err());
    }
}
