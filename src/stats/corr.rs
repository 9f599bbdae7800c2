//! Correlation coefficients on paired `f64` slices.
//!
//! Convention for undefined cases (one for all functions here): the result is `None` when
//! the slices hold fewer than 2 pairs, hold a non-finite value, or the coefficient's
//! denominator is zero (a constant input; for the tau-like variant, every pair tied in the
//! human score). NaN never comes out; callers count the `None`s. Slices of different
//! lengths are a programming error and panic.

use serde::Serialize;

/// Which correlation coefficient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum CorrKind {
    Pearson,
    /// Pearson of average ranks (ties share the mean of their positions), as scipy's `spearmanr`.
    Spearman,
    /// Kendall's tau-b, as scipy's `kendalltau` (default `variant='b'`).
    KendallTauB,
    /// WMT "Kendall's tau-like": pairs tied in the human score skipped, metric ties count as
    /// discordant. See [`kendall_tau_like`].
    KendallTauLike,
}

impl CorrKind {
    pub const ALL: [CorrKind; 4] = [CorrKind::Pearson, CorrKind::Spearman, CorrKind::KendallTauB, CorrKind::KendallTauLike];

    /// Short stable name for reports and files.
    pub fn name(self) -> &'static str {
        match self {
            CorrKind::Pearson => "pearson",
            CorrKind::Spearman => "spearman",
            CorrKind::KendallTauB => "kendall_tau_b",
            CorrKind::KendallTauLike => "kendall_tau_like",
        }
    }
}

/// The coefficient `kind` of `metric` against `human` (only the tau-like variant is asymmetric).
pub fn corr(kind: CorrKind, metric: &[f64], human: &[f64]) -> Option<f64> {
    match kind {
        CorrKind::Pearson => pearson(metric, human),
        CorrKind::Spearman => spearman(metric, human),
        CorrKind::KendallTauB => kendall_tau_b(metric, human),
        CorrKind::KendallTauLike => kendall_tau_like(metric, human),
    }
}

fn usable(x: &[f64], y: &[f64]) -> bool {
    assert_eq!(x.len(), y.len(), "correlation of slices of different lengths");
    x.len() >= 2 && x.iter().chain(y).all(|v| v.is_finite())
}

/// Pearson's r = sum (x-mx)(y-my) / sqrt(sum (x-mx)^2 sum (y-my)^2), clamped to [-1, 1].
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    if !usable(x, y) || is_constant(x) || is_constant(y) {
        return None;
    }
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    let r = sxy / (sxx * syy).sqrt();
    r.is_finite().then(|| r.clamp(-1.0, 1.0))
}

fn is_constant(x: &[f64]) -> bool {
    x.iter().all(|v| *v == x[0])
}

/// Spearman's rho: Pearson's r of the average ranks of x and of y.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if !usable(x, y) {
        return None;
    }
    pearson(&average_ranks(x), &average_ranks(y))
}

/// Ranks 1..n in ascending order; tied values get the mean of the positions they span
/// (e.g. `[10, 20, 20, 30]` -> `[1, 2.5, 2.5, 4]`). Values are compared with `total_cmp`.
pub fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut start = 0;
    while start < idx.len() {
        let mut end = start + 1;
        while end < idx.len() && x[idx[end]] == x[idx[start]] {
            end += 1;
        }
        let r = (start + end + 1) as f64 / 2.0; // mean of positions start+1..=end
        for &i in &idx[start..end] {
            ranks[i] = r;
        }
        start = end;
    }
    ranks
}

/// Pair counts over the n(n-1)/2 unordered pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairCounts {
    pub pairs: u64,
    /// Pairs tied in x (whatever y does).
    pub tied_x: u64,
    /// Pairs tied in y.
    pub tied_y: u64,
    /// Pairs tied in both.
    pub tied_xy: u64,
    /// Pairs ordered the same way, strictly, by x and y.
    pub concordant: u64,
    /// Pairs ordered oppositely, strictly.
    pub discordant: u64,
}

/// Counts concordant, discordant and tied pairs in O(n log n) (Knight 1966: sort by (x, y),
/// count discordant pairs as the inversions of y by merge sort). Assumes finite values.
pub fn pair_counts(x: &[f64], y: &[f64]) -> PairCounts {
    assert_eq!(x.len(), y.len(), "pair counts of slices of different lengths");
    let n = x.len() as u64;
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then(y[a].total_cmp(&y[b])));
    let run_pairs = |same: &dyn Fn(usize, usize) -> bool| -> u64 {
        let (mut total, mut run) = (0u64, 1u64);
        for w in 1..idx.len() {
            if same(idx[w - 1], idx[w]) {
                run += 1;
            } else {
                total += run * (run - 1) / 2;
                run = 1;
            }
        }
        total + run * (run - 1) / 2
    };
    let tied_x = run_pairs(&|a, b| x[a] == x[b]);
    let tied_xy = run_pairs(&|a, b| x[a] == x[b] && y[a] == y[b]);
    let mut ys: Vec<f64> = idx.iter().map(|&i| y[i]).collect();
    let mut buf = ys.clone();
    let discordant = inversions(&mut ys, &mut buf);
    let (mut tied_y, mut run) = (0u64, 1u64);
    for w in 1..ys.len() {
        if ys[w] == ys[w - 1] {
            run += 1;
        } else {
            tied_y += run * (run - 1) / 2;
            run = 1;
        }
    }
    tied_y += run * (run - 1) / 2;
    let pairs = n * n.saturating_sub(1) / 2;
    PairCounts {
        pairs,
        tied_x,
        tied_y,
        tied_xy,
        concordant: pairs - tied_x - tied_y + tied_xy - discordant,
        discordant,
    }
}

/// Sorts `v` ascending and returns the number of strict inversions (i < j, v[i] > v[j]).
fn inversions(v: &mut [f64], buf: &mut [f64]) -> u64 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut count = {
        let (l, r) = v.split_at_mut(mid);
        let (bl, br) = buf.split_at_mut(mid);
        inversions(l, bl) + inversions(r, br)
    };
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < mid && j < n {
        if v[i] <= v[j] {
            buf[k] = v[i];
            i += 1;
        } else {
            buf[k] = v[j];
            count += (mid - i) as u64;
            j += 1;
        }
        k += 1;
    }
    buf[k..k + mid - i].copy_from_slice(&v[i..mid]);
    k += mid - i;
    buf[k..k + n - j].copy_from_slice(&v[j..n]);
    v.copy_from_slice(&buf[..n]);
    count
}

/// Kendall's tau-b = (C - D) / sqrt((P - T_x)(P - T_y)), P = n(n-1)/2 pairs, T_x and T_y the
/// pairs tied in x and in y. Equals scipy's `kendalltau(x, y)` (variant 'b').
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    if !usable(x, y) {
        return None;
    }
    let c = pair_counts(x, y);
    let denom = ((c.pairs - c.tied_x) as f64) * ((c.pairs - c.tied_y) as f64);
    if denom == 0.0 {
        return None;
    }
    let tau = (c.concordant as f64 - c.discordant as f64) / denom.sqrt();
    Some(tau.clamp(-1.0, 1.0))
}

/// WMT "Kendall's tau-like" = (Conc - Disc) / (Conc + Disc) over the pairs NOT tied in the
/// human score; Conc = the metric orders the pair strictly the same way as the human score,
/// Disc = the metric orders it the other way OR ties it. Pairs tied in the human score are
/// skipped. This is the segment-level DARR formulation of the WMT17-19 metrics tasks (Bojar
/// et al. 2017, Ma et al. 2018/2019: a metric tie is penalised as discordant) and exactly
/// `compute_kenall(human, metric)` in laihuiyuan/eval-formality-transfer `kendalltau.py`
/// (Lai et al. 2022), used there for formality transfer. `None` when every pair is tied in
/// the human score.
pub fn kendall_tau_like(metric: &[f64], human: &[f64]) -> Option<f64> {
    if !usable(metric, human) {
        return None;
    }
    let c = pair_counts(human, metric);
    let considered = c.pairs - c.tied_x;
    if considered == 0 {
        return None;
    }
    let disc = considered - c.concordant;
    Some((c.concordant as f64 - disc as f64) / considered as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(x: &[f64], y: &[f64]) -> PairCounts {
        let (mut p, mut tx, mut ty, mut txy, mut con, mut dis) = (0, 0, 0, 0, 0, 0);
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                p += 1;
                let (dx, dy) = (x[i] - x[j], y[i] - y[j]);
                if dx == 0.0 { tx += 1; }
                if dy == 0.0 { ty += 1; }
                if dx == 0.0 && dy == 0.0 { txy += 1; }
                if dx * dy > 0.0 { con += 1; }
                if dx * dy < 0.0 { dis += 1; }
            }
        }
        PairCounts { pairs: p, tied_x: tx, tied_y: ty, tied_xy: txy, concordant: con, discordant: dis }
    }

    #[test]
    fn fast_pair_counts_equal_brute_force_with_many_ties() {
        let mut s = 12345u64;
        for n in [0usize, 1, 2, 3, 7, 50, 301] {
            let mut next = || { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (s >> 59) as f64 };
            let x: Vec<f64> = (0..n).map(|_| next()).collect();
            let y: Vec<f64> = (0..n).map(|_| next()).collect();
            assert_eq!(pair_counts(&x, &y), brute(&x, &y), "n = {n}");
        }
    }

    #[test]
    fn hand_checked_values() {
        // x = 1..5, y = [2, 1, 4, 3, 5]: C = 8, D = 2, tau = 0.6; rho = 1 - 6*4/(5*24) = 0.8.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [2.0, 1.0, 4.0, 3.0, 5.0];
        assert!((kendall_tau_b(&x, &y).unwrap() - 0.6).abs() < 1e-15);
        assert!((spearman(&x, &y).unwrap() - 0.8).abs() < 1e-15);
        assert!((pearson(&x, &y).unwrap() - 0.8).abs() < 1e-15);
        assert_eq!(average_ranks(&[10.0, 20.0, 20.0, 30.0, 20.0]), vec![1.0, 3.0, 3.0, 5.0, 3.0]);
    }

    #[test]
    fn tau_like_skips_human_ties_and_penalises_metric_ties() {
        // human [1, 1, 2, 3]: pair (0,1) tied in human, skipped -> 5 pairs considered.
        // metric [5, 0, 5, 9]: (0,2) metric tie -> Disc; (0,3),(1,2),(1,3),(2,3) Conc.
        let human = [1.0, 1.0, 2.0, 3.0];
        let metric = [5.0, 0.0, 5.0, 9.0];
        assert!((kendall_tau_like(&metric, &human).unwrap() - 0.6).abs() < 1e-15);
        assert_eq!(kendall_tau_like(&metric, &[2.0, 2.0, 2.0, 2.0]), None);
        // not symmetric: a metric tie costs a pair, a human tie drops it.
        let (a, b) = ([1.0, 1.0, 2.0], [1.0, 2.0, 3.0]);
        assert!((kendall_tau_like(&a, &b).unwrap() - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(kendall_tau_like(&b, &a), Some(1.0));
    }

    #[test]
    fn undefined_cases_return_none() {
        for kind in CorrKind::ALL {
            assert_eq!(corr(kind, &[], &[]), None);
            assert_eq!(corr(kind, &[1.0], &[2.0]), None);
            assert_eq!(corr(kind, &[1.0, f64::NAN, 3.0], &[1.0, 2.0, 3.0]), None);
            assert_eq!(corr(kind, &[1.0, 2.0, f64::INFINITY], &[1.0, 2.0, 3.0]), None);
        }
        for kind in [CorrKind::Pearson, CorrKind::Spearman, CorrKind::KendallTauB] {
            assert_eq!(corr(kind, &[3.0, 3.0, 3.0], &[1.0, 2.0, 3.0]), None, "{kind:?}");
            assert_eq!(corr(kind, &[1.0, 2.0, 3.0], &[3.0, 3.0, 3.0]), None, "{kind:?}");
        }
        // a constant metric against a varying human score is defined for tau-like: all Disc.
        assert_eq!(kendall_tau_like(&[3.0, 3.0, 3.0], &[1.0, 2.0, 3.0]), Some(-1.0));
    }

    #[test]
    fn ten_thousand_pairs_are_fine() {
        let x: Vec<f64> = (0..20_000).map(|i| ((i * 7919) % 1000) as f64).collect();
        let y: Vec<f64> = (0..20_000).map(|i| ((i * 104729) % 997) as f64 + x[i] / 2.0).collect();
        let t = kendall_tau_b(&x, &y).unwrap();
        assert!(t > 0.0 && t < 1.0);
    }
}
