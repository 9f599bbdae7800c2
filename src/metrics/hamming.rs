//! Token-level Hamming distance, StylePTB's measure of how hard a transfer is.
//!
//! Tokens come from splitting on whitespace (Python `str.split()`), case kept. Hamming distance
//! is only defined for equal lengths; for unequal lengths this module compares position by
//! position up to the shorter length and counts every extra position of the longer sentence as
//! a difference: `d(a, b) = #{i < min(m, n) : a_i != b_i} + |m - n|`. So inserting one word at
//! the front of a sentence can cost every position after it; this is deliberate (it is the
//! positional count StylePTB's definition implies), not an edit distance.

use super::py;

/// Positional token mismatches plus the length difference (see the module docs).
pub fn token_hamming(a: &str, b: &str) -> usize {
    let (a, b): (Vec<&str>, Vec<&str>) = (py::split(a).collect(), py::split(b).collect());
    let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
    a.len().max(b.len()) - same
}

/// `token_hamming` divided by the longer length (0 when both are empty), in 0..=1.
pub fn token_hamming_normalized(a: &str, b: &str) -> f64 {
    let longest = py::split(a).count().max(py::split(b).count());
    if longest == 0 {
        0.0
    } else {
        token_hamming(a, b) as f64 / longest as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        assert_eq!(token_hamming("the cat sat", "the dog sat"), 1);
        assert_eq!(token_hamming("the cat sat", "the cat sat down ."), 2);
        assert_eq!(token_hamming("a b c", "x a b c"), 4);
        assert_eq!(token_hamming("", ""), 0);
        assert_eq!(token_hamming("The", "the"), 1);
        assert_eq!(token_hamming_normalized("a b", "a c d e"), 0.75);
        assert_eq!(token_hamming_normalized("", ""), 0.0);
    }
}
