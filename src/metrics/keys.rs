//! Sorted n-gram keys, the counting device behind BLEU's and chrF's n-gram matches.
//!
//! Each position of a unit sequence (token ids or characters, every unit > 0) gets a key packing
//! the `order` units that start there, most significant first, zero-padded past the end. Sorting
//! by the full key also sorts by every shorter prefix, so one sort per text serves all orders:
//! the order-n n-gram of a key is `key >> (bits * (order - n))`, and it runs past the end
//! exactly when its last unit is 0. Keys are exact (no hashing); they are `u64` when
//! `bits * order` fits, else `u128`.

use std::ops::{BitAnd, BitOr, BitXor, Shl, Shr};

pub trait Key:
    Copy
    + Ord
    + Default
    + Send
    + Sync
    + From<u32>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + BitOr<Output = Self>
    + BitAnd<Output = Self>
    + BitXor<Output = Self>
{
    const WIDTH: u32;
    const ONES: Self;
    fn leading_zeros(self) -> u32;
    fn trailing_zeros(self) -> u32;
}

impl Key for u64 {
    const WIDTH: u32 = 64;
    const ONES: Self = u64::MAX;
    fn leading_zeros(self) -> u32 {
        u64::leading_zeros(self)
    }
    fn trailing_zeros(self) -> u32 {
        u64::trailing_zeros(self)
    }
}

impl Key for u128 {
    const WIDTH: u32 = 128;
    const ONES: Self = u128::MAX;
    fn leading_zeros(self) -> u32 {
        u128::leading_zeros(self)
    }
    fn trailing_zeros(self) -> u32 {
        u128::trailing_zeros(self)
    }
}

/// Bits needed for units up to `max`.
pub fn bits_for(max: u32) -> u32 {
    (32 - max.leading_zeros()).max(1)
}

/// Whether keys of `order` units of `bits` bits fit in a `u64`.
pub fn fits_u64(bits: u32, order: usize) -> bool {
    bits as usize * order <= 64
}

/// The sorted position keys of `units` into `out`.
pub fn pack<K: Key>(units: &[u32], order: usize, bits: u32, out: &mut Vec<K>) {
    out.clear();
    if order == 0 || units.is_empty() {
        return;
    }
    let used = bits * order as u32;
    let mask = K::ONES >> (K::WIDTH - used);
    // The key of position 0, then each next key shifts one unit in (0 past the end).
    let mut k = K::default();
    for j in 0..order {
        k = (k << bits) | K::from(units.get(j).copied().unwrap_or(0));
    }
    out.push(k);
    for i in 1..units.len() {
        k = ((k << bits) & mask) | K::from(units.get(i + order - 1).copied().unwrap_or(0));
        out.push(k);
    }
    out.sort_unstable();
}

/// The order-`n` n-grams of sorted keys, in sorted order, without those running past the end.
pub fn grams<K: Key>(keys: &[K], n: usize, order: usize, bits: u32) -> impl Iterator<Item = K> + '_ {
    let shift = bits * (order - n) as u32;
    let low = K::from(if bits >= 32 { u32::MAX } else { (1u32 << bits) - 1 });
    keys.iter()
        .map(move |&k| k >> shift)
        .filter(move |&g| g & low != K::default())
}

/// Number of matched n-grams of order `n`: the sum over distinct n-grams of the smaller count.
pub fn matches<K: Key>(h: &[K], r: &[K], n: usize, order: usize, bits: u32) -> u64 {
    let (mut hi, mut ri) = (grams(h, n, order, bits), grams(r, n, order, bits));
    let (mut a, mut b) = (hi.next(), ri.next());
    let mut m = 0;
    while let (Some(x), Some(y)) = (a, b) {
        match x.cmp(&y) {
            std::cmp::Ordering::Less => a = hi.next(),
            std::cmp::Ordering::Greater => b = ri.next(),
            std::cmp::Ordering::Equal => {
                m += 1;
                a = hi.next();
                b = ri.next();
            }
        }
    }
    m
}

/// `matches` for every order 1..=`order` at once (`out[n - 1]`), in one merge of the two lists:
/// all keys sharing an n-gram are adjacent, and two neighbours share the n-grams of every order
/// up to their common prefix length, so each order's groups can be closed as they end.
pub fn matches_all<K: Key>(h: &[K], r: &[K], order: usize, bits: u32, out: &mut [u64]) {
    const MAX: usize = 8;
    assert!(order <= MAX && out.len() == order);
    let unused = K::WIDTH - bits * order as u32;
    // Counts of the current n-gram of each order on each side ([hyp, ref]), and the matches.
    let mut cnt = [[0u64; MAX]; 2];
    let mut acc = [0u64; MAX];
    let (mut i, mut j) = (0, 0);
    let mut prev: Option<K> = None;
    loop {
        let (k, side) = if i < h.len() && (j >= r.len() || h[i] <= r[j]) {
            i += 1;
            (h[i - 1], 0)
        } else if j < r.len() {
            j += 1;
            (r[j - 1], 1)
        } else {
            break;
        };
        // Units shared with the previous key, and units before the zero padding.
        let common = match prev {
            Some(p) if p == k => order,
            Some(p) => ((p ^ k).leading_zeros() - unused) as usize / bits as usize,
            None => 0,
        };
        let valid = (order - (k.trailing_zeros().min(bits * order as u32) / bits) as usize).min(MAX);
        prev = Some(k);
        let same = common.min(valid);
        for c in &mut cnt[side][..same] {
            *c += 1;
        }
        // New n-grams of orders same+1..=valid start here: close the previous ones.
        for n in same..valid {
            acc[n] += cnt[0][n].min(cnt[1][n]);
            cnt[0][n] = 0;
            cnt[1][n] = 0;
            cnt[side][n] = 1;
        }
    }
    for n in 0..order {
        out[n] = acc[n] + cnt[0][n].min(cnt[1][n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sort_serves_every_order() {
        // "abab" vs "bab": unigrams a2 b2 / a1 b2 -> 3; bigrams ab2 ba1 / ba1 ab1 -> 2; trigrams 1.
        let (h, r) = ([1, 2, 1, 2], [2, 1, 2]);
        let (mut kh, mut kr) = (Vec::<u64>::new(), Vec::<u64>::new());
        pack(&h, 3, 2, &mut kh);
        pack(&r, 3, 2, &mut kr);
        let m: Vec<u64> = (1..=3).map(|n| matches(&kh, &kr, n, 3, 2)).collect();
        assert_eq!(m, [3, 2, 1]);
        let mut all = [0; 3];
        matches_all(&kh, &kr, 3, 2, &mut all);
        assert_eq!(all, [3, 2, 1]);
        // Against the per-order merge on random sequences, u64 and u128.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..3000 {
            let mut seq =
                |n: usize| -> Vec<u32> { (0..rng.random_range(0..n)).map(|_| rng.random_range(1..4)).collect() };
            let (h, r) = (seq(12), seq(12));
            let (mut kh, mut kr) = (Vec::<u128>::new(), Vec::<u128>::new());
            pack(&h, 6, 21, &mut kh);
            pack(&r, 6, 21, &mut kr);
            let mut all = [0; 6];
            matches_all(&kh, &kr, 6, 21, &mut all);
            let per: Vec<u64> = (1..=6).map(|n| matches(&kh, &kr, n, 6, 21)).collect();
            assert_eq!(all.to_vec(), per, "{h:?} {r:?}");
            let (mut kh, mut kr) = (Vec::<u64>::new(), Vec::<u64>::new());
            pack(&h, 4, 2, &mut kh);
            pack(&r, 4, 2, &mut kr);
            let mut all = [0; 4];
            matches_all(&kh, &kr, 4, 2, &mut all);
            let per: Vec<u64> = (1..=4).map(|n| matches(&kh, &kr, n, 4, 2)).collect();
            assert_eq!(all.to_vec(), per, "{h:?} {r:?}");
        }
        assert_eq!(grams(&kh, 3, 3, 2).count(), 2);
        assert_eq!((bits_for(1), bits_for(2), bits_for(0x10FFFF)), (1, 2, 21));
        assert!(fits_u64(16, 4) && !fits_u64(17, 4));
    }
}
