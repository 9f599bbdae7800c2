//! Orderings of displayed outputs, written like `3>1=2>4`.
//!
//! Grammar: positions `1..=n` (the order outputs were shown in), separated by `>` (left is
//! better) or `=` (tie). Every position appears exactly once. Spaces are ignored. Formatting
//! writes the best group first and each tie group in ascending position order, without
//! spaces, so `format(parse(s))` is a canonical form of `s`.

use std::fmt;

use serde::Serialize;

/// How tied positions share ranks (rank 1 = best).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum TieRule {
    /// Mean of the places the group spans: `1>2=3>4` -> 1, 2.5, 2.5, 4 (fractional ranking;
    /// ranks always sum to n(n+1)/2). The default, used for average ranks in this crate.
    #[default]
    Average,
    /// Lowest place of the group: 1, 2, 2, 4 (competition ranking).
    Min,
    /// Consecutive group numbers: 1, 2, 2, 3 (dense ranking).
    Dense,
}

/// A parsed ordering: tie groups of 1-based positions, best group first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ordering {
    groups: Vec<Vec<usize>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderingError {
    #[error("empty ordering: expected the labels 1 to {n} joined by '>' or '='")]
    Empty { n: usize },
    #[error("unexpected character {ch:?} at column {col}: expected a label, '>' or '='")]
    BadChar { ch: char, col: usize },
    #[error("expected a label at column {col}, found {found}")]
    ExpectedPosition { col: usize, found: String },
    #[error("expected '>' or '=' at column {col} after label {after}")]
    ExpectedOperator { col: usize, after: usize },
    #[error("label {text} at column {col} is not one of 1 to {n}")]
    OutOfRange { text: String, col: usize, n: usize },
    #[error("label {pos} appears twice (columns {first} and {second})")]
    Duplicate { pos: usize, first: usize, second: usize },
    #[error("label {pos} is missing: every label 1 to {n} must appear once")]
    Missing { pos: usize, n: usize },
}

impl Ordering {
    /// Parses an ordering of the positions `1..=n`. Columns in errors count characters from 1.
    pub fn parse(s: &str, n: usize) -> Result<Ordering, OrderingError> {
        let chars: Vec<char> = s.chars().collect();
        let skip_ws = |mut i: usize| {
            while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
            i
        };
        let mut i = skip_ws(0);
        if i == chars.len() {
            return Err(OrderingError::Empty { n });
        }
        let mut groups: Vec<Vec<usize>> = vec![Vec::new()];
        let mut seen_at = vec![0usize; n + 1];
        loop {
            // a position
            let col = i + 1;
            match chars.get(i) {
                None => return Err(OrderingError::ExpectedPosition { col, found: "the end".into() }),
                Some(c @ ('>' | '=')) => return Err(OrderingError::ExpectedPosition { col, found: format!("{c:?}") }),
                Some(c) if !c.is_ascii_digit() => return Err(OrderingError::BadChar { ch: *c, col }),
                Some(_) => {}
            }
            let mut text = String::new();
            while let Some(d) = chars.get(i).filter(|d| d.is_ascii_digit()) {
                text.push(*d);
                i += 1;
            }
            let Some(pos) = text.parse::<usize>().ok().filter(|p| (1..=n).contains(p)) else {
                return Err(OrderingError::OutOfRange { text, col, n });
            };
            if seen_at[pos] != 0 {
                return Err(OrderingError::Duplicate { pos, first: seen_at[pos], second: col });
            }
            seen_at[pos] = col;
            groups.last_mut().expect("one group at least").push(pos);
            // an operator or the end
            i = skip_ws(i);
            match chars.get(i) {
                None => break,
                Some('>') => groups.push(Vec::new()),
                Some('=') => {}
                Some(c) if c.is_ascii_digit() || c.is_ascii_punctuation() => {
                    return Err(OrderingError::ExpectedOperator { col: i + 1, after: pos });
                }
                Some(c) => return Err(OrderingError::BadChar { ch: *c, col: i + 1 }),
            }
            i = skip_ws(i + 1);
        }
        if let Some(pos) = (1..=n).find(|&p| seen_at[p] == 0) {
            return Err(OrderingError::Missing { pos, n });
        }
        for g in &mut groups {
            g.sort_unstable();
        }
        Ok(Ordering { groups })
    }

    /// The ordering implied by ranks (lower is better, equal values tie); position `p` is
    /// `ranks[p - 1]`. Panics on a non-finite rank.
    pub fn from_ranks(ranks: &[f64]) -> Ordering {
        assert!(ranks.iter().all(|r| r.is_finite()), "non-finite rank");
        let mut idx: Vec<usize> = (0..ranks.len()).collect();
        idx.sort_by(|&a, &b| ranks[a].total_cmp(&ranks[b]).then(a.cmp(&b)));
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (k, &i) in idx.iter().enumerate() {
            if k > 0 && ranks[i] == ranks[idx[k - 1]] {
                groups.last_mut().expect("a group exists").push(i + 1);
            } else {
                groups.push(vec![i + 1]);
            }
        }
        Ordering { groups }
    }

    /// Tie groups of 1-based positions, best first, each ascending.
    pub fn groups(&self) -> &[Vec<usize>] {
        &self.groups
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Rank of each position (index `p - 1`), 1 = best, ties by `rule`.
    pub fn ranks(&self, rule: TieRule) -> Vec<f64> {
        let mut ranks = vec![0.0; self.len()];
        let mut place = 1usize;
        for (g, group) in self.groups.iter().enumerate() {
            let r = match rule {
                TieRule::Average => place as f64 + (group.len() - 1) as f64 / 2.0,
                TieRule::Min => place as f64,
                TieRule::Dense => (g + 1) as f64,
            };
            for &p in group {
                ranks[p - 1] = r;
            }
            place += group.len();
        }
        ranks
    }
}

impl fmt::Display for Ordering {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (g, group) in self.groups.iter().enumerate() {
            if g > 0 {
                f.write_str(">")?;
            }
            for (k, p) in group.iter().enumerate() {
                if k > 0 {
                    f.write_str("=")?;
                }
                write!(f, "{p}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranks_and_formats_back() {
        let o = Ordering::parse("3>1=2>4", 4).unwrap();
        assert_eq!(o.groups(), &[vec![3], vec![1, 2], vec![4]]);
        assert_eq!(o.ranks(TieRule::Average), vec![2.5, 2.5, 1.0, 4.0]);
        assert_eq!(o.ranks(TieRule::Min), vec![2.0, 2.0, 1.0, 4.0]);
        assert_eq!(o.ranks(TieRule::Dense), vec![2.0, 2.0, 1.0, 3.0]);
        assert_eq!(o.to_string(), "3>1=2>4");
        assert_eq!(Ordering::parse(" 3 > 2=1 >4 ", 4).unwrap().to_string(), "3>1=2>4");
        assert_eq!(Ordering::from_ranks(&o.ranks(TieRule::Average)), o);
        assert_eq!(Ordering::from_ranks(&o.ranks(TieRule::Dense)), o);
        let all_tied = Ordering::parse("2=1=3", 3).unwrap();
        assert_eq!(all_tied.ranks(TieRule::Average), vec![2.0; 3]);
        let big = Ordering::parse("10>2=1>3>4>5>6>7>8>9>11", 11).unwrap();
        assert_eq!(big.ranks(TieRule::Average)[9], 1.0);
        assert_eq!(big.to_string(), "10>1=2>3>4>5>6>7>8>9>11");
    }

    #[test]
    fn errors_name_the_position_or_character() {
        use OrderingError::*;
        let e = |s: &str| Ordering::parse(s, 4).unwrap_err();
        assert_eq!(e(""), Empty { n: 4 });
        assert_eq!(e("3>1=2>4>"), ExpectedPosition { col: 9, found: "the end".into() });
        assert_eq!(e("3>>1=2>4"), ExpectedPosition { col: 3, found: "'>'".into() });
        assert_eq!(e(">3>1=2>4"), ExpectedPosition { col: 1, found: "'>'".into() });
        assert_eq!(e("3>1<2>4"), ExpectedOperator { col: 4, after: 1 });
        assert_eq!(e("3>1=a>4"), BadChar { ch: 'a', col: 5 });
        assert_eq!(e("3>1=2>5"), OutOfRange { text: "5".into(), col: 7, n: 4 });
        assert_eq!(e("3>0=2>4"), OutOfRange { text: "0".into(), col: 3, n: 4 });
        assert_eq!(e("3>1=3>4"), Duplicate { pos: 3, first: 1, second: 5 });
        assert_eq!(e("3>1>4"), Missing { pos: 2, n: 4 });
        assert_eq!(e("3>1 2>4"), ExpectedOperator { col: 5, after: 1 });
        assert_eq!(e("3>1x2>4"), BadChar { ch: 'x', col: 4 });
        assert_eq!(e("3>1=2>4>  "), ExpectedPosition { col: 11, found: "the end".into() });
        assert_eq!(e("99999999999999999999999>1"), OutOfRange { text: "99999999999999999999999".into(), col: 1, n: 4 });
        assert_eq!(e("3>1=3>4").to_string(), "label 3 appears twice (columns 1 and 5)");
        assert_eq!(e("3>1>4").to_string(), "label 2 is missing: every label 1 to 4 must appear once");
    }
}
