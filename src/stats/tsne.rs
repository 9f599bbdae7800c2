//! t-SNE (van der Maaten & Hinton 2008) with the exact gradient, run as scikit-learn's
//! `TSNE(method="exact")` runs it (docs/METHODS.md, t-SNE): squared Euclidean distances,
//! per-point Gaussian bandwidths found by binary search on the entropy (perplexity), joint
//! probabilities `(p_j|i + p_i|j) / Σ`, a Student-t (one degree of freedom) map, PCA
//! initialisation scaled to a first-axis standard deviation of 1e-4, early exaggeration 12
//! for 250 iterations with momentum 0.5, then momentum 0.8, per-parameter gains (+0.2 / ×0.8,
//! at least 0.01; gains and momentum reset between the two stages), learning rate `max(N / 12 / 4, 50)`, 1000 iterations, convergence checked
//! every 50. Rows are computed in parallel, each summed in a fixed order, so the result does
//! not depend on the number of threads: same input and seed, same coordinates.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand::Rng;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// numpy's `finfo(double).eps`, scikit-learn's floor for probabilities.
const MACHINE_EPSILON: f64 = f64::EPSILON;
/// The binary search's tolerance on the entropy and its steps (scikit-learn's `_utils.pyx`).
const PERPLEXITY_TOLERANCE: f64 = 1e-5;
const SEARCH_STEPS: usize = 100;
/// Iterations with early exaggeration, and how often convergence is checked.
const EXPLORATION_ITER: usize = 250;
const CHECK_EVERY: usize = 50;
const MIN_GAIN: f64 = 0.01;
const MIN_GRAD_NORM: f64 = 1e-7;
const ITER_WITHOUT_PROGRESS: usize = 300;
/// The most points one map takes: P is held as a dense N x N matrix.
pub const MAX_POINTS: usize = 5000;

#[derive(Debug, thiserror::Error)]
pub enum TsneError {
    #[error("t-SNE needs more points than the perplexity ({n} points, perplexity {perplexity}); lower --perplexity")]
    TooFew { n: usize, perplexity: f64 },
    #[error("t-SNE of {n} points: at most {MAX_POINTS} (lower --max-points)")]
    TooMany { n: usize },
    #[error("t-SNE: point {i} has {got} dimensions, point 0 has {want}")]
    Ragged { i: usize, got: usize, want: usize },
    #[error("t-SNE: every point is the same vector; nothing to map")]
    Identical,
    #[error("t-SNE: perplexity must be positive and finite, not {0}")]
    Perplexity(f64),
    #[error("cancelled")]
    Cancelled,
}

/// How the map starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    /// The first two principal components, scaled (scikit-learn's default).
    Pca,
    /// Gaussian noise with standard deviation 1e-4 drawn from the seed.
    Random,
}

/// The settings of a run; [`TsneSpec::new`] has scikit-learn's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TsneSpec {
    pub perplexity: f64,
    pub early_exaggeration: f64,
    /// `None`: scikit-learn's `auto`, `max(N / early_exaggeration / 4, 50)`.
    pub learning_rate: Option<f64>,
    pub max_iter: usize,
    pub init: Init,
    pub seed: u64,
}

impl TsneSpec {
    pub fn new(perplexity: f64, seed: u64) -> TsneSpec {
        TsneSpec { perplexity, early_exaggeration: 12.0, learning_rate: None, max_iter: 1000, init: Init::Pca, seed }
    }

    /// The learning rate used for `n` points.
    pub fn rate(&self, n: usize) -> f64 {
        self.learning_rate.unwrap_or_else(|| (n as f64 / self.early_exaggeration / 4.0).max(50.0))
    }
}

/// A finished map: 2-D coordinates per input point, the final KL divergence (with the
/// exaggeration removed) and the number of iterations run.
#[derive(Debug, Clone, PartialEq)]
pub struct TsneMap {
    pub coords: Vec<[f64; 2]>,
    pub kl: f64,
    pub iterations: usize,
}

/// Squared Euclidean distances, row-major N x N.
fn squared_distances(x: &[Vec<f32>]) -> Vec<f64> {
    let n = x.len();
    let mut d = vec![0.0; n * n];
    d.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
        for (j, v) in row.iter_mut().enumerate() {
            *v = x[i].iter().zip(&x[j]).map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2)).sum();
        }
    });
    d
}

/// Conditional probabilities `p_j|i` of one row, with the bandwidth found by binary search so
/// that the row's entropy is `ln(perplexity)` (within 1e-5 nats, at most 100 steps).
fn conditional_row(i: usize, dist: &[f64], perplexity: f64, out: &mut [f64]) {
    let want = perplexity.ln();
    let (mut lo, mut hi, mut beta) = (f64::NEG_INFINITY, f64::INFINITY, 1.0);
    for _ in 0..SEARCH_STEPS {
        let mut sum = 0.0;
        for (j, p) in out.iter_mut().enumerate() {
            *p = if j == i { 0.0 } else { (-dist[j] * beta).exp() };
            sum += *p;
        }
        if sum == 0.0 {
            sum = 1e-8;
        }
        let mut weighted = 0.0;
        for (p, d) in out.iter_mut().zip(dist) {
            *p /= sum;
            weighted += d * *p;
        }
        let diff = sum.ln() + beta * weighted - want;
        if diff.abs() <= PERPLEXITY_TOLERANCE {
            break;
        }
        if diff > 0.0 {
            lo = beta;
            beta = if hi == f64::INFINITY { beta * 2.0 } else { (beta + hi) / 2.0 };
        } else {
            hi = beta;
            beta = if lo == f64::NEG_INFINITY { beta / 2.0 } else { (beta + lo) / 2.0 };
        }
    }
}

/// The joint probabilities `p_ij = (p_j|i + p_i|j) / Σ_kl (p_l|k + p_k|l)` of the points,
/// floored at machine epsilon off the diagonal (0 on it), row-major N x N.
pub fn joint_probabilities(x: &[Vec<f32>], perplexity: f64) -> Vec<f64> {
    let n = x.len();
    let dist = squared_distances(x);
    let mut cond = vec![0.0; n * n];
    cond.par_chunks_mut(n).enumerate().for_each(|(i, row)| conditional_row(i, &dist[i * n..(i + 1) * n], perplexity, row));
    let mut p = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            p[i * n + j] = cond[i * n + j] + cond[j * n + i];
        }
    }
    let sum = p.iter().sum::<f64>().max(MACHINE_EPSILON);
    for i in 0..n {
        for j in 0..n {
            p[i * n + j] = if i == j { 0.0 } else { (p[i * n + j] / sum).max(MACHINE_EPSILON) };
        }
    }
    p
}

/// The first two principal components of the points (eigenvectors of the covariance, each
/// signed so that its largest loading is positive, as scikit-learn's `svd_flip`), scaled so
/// that the first has standard deviation 1e-4.
pub fn pca_init(x: &[Vec<f32>]) -> Result<Vec<[f64; 2]>, TsneError> {
    let (n, d) = (x.len(), x[0].len());
    let mean: Vec<f64> = (0..d).map(|k| x.iter().map(|r| f64::from(r[k])).sum::<f64>() / n as f64).collect();
    let centred = nalgebra::DMatrix::from_fn(n, d, |i, k| f64::from(x[i][k]) - mean[k]);
    let cov = centred.transpose() * &centred;
    let eig = nalgebra::SymmetricEigen::new(cov);
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]).then(a.cmp(&b)));
    let mut axes = Vec::with_capacity(2);
    for &c in order.iter().take(2) {
        let mut v: Vec<f64> = eig.eigenvectors.column(c).iter().copied().collect();
        let big = v.iter().copied().fold(0.0f64, |m, a| if a.abs() > m.abs() { a } else { m });
        if big < 0.0 {
            v.iter_mut().for_each(|a| *a = -*a);
        }
        axes.push(v);
    }
    while axes.len() < 2 {
        axes.push(vec![0.0; d]);
    }
    let project = |i: usize, v: &[f64]| centred.row(i).iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
    let mut y: Vec<[f64; 2]> = (0..n).map(|i| [project(i, &axes[0]), project(i, &axes[1])]).collect();
    let m0 = y.iter().map(|p| p[0]).sum::<f64>() / n as f64;
    let sd = (y.iter().map(|p| (p[0] - m0).powi(2)).sum::<f64>() / n as f64).sqrt();
    if !(sd > 0.0) {
        return Err(TsneError::Identical);
    }
    for p in &mut y {
        p[0] = p[0] / sd * 1e-4;
        p[1] = p[1] / sd * 1e-4;
    }
    Ok(y)
}

/// Two independent normal draws with standard deviation `sd` (Box-Muller).
fn gaussian_pair(rng: &mut ChaCha8Rng, sd: f64) -> [f64; 2] {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    let r = (-2.0 * u1.ln()).sqrt() * sd;
    let t = std::f64::consts::TAU * u2;
    [r * t.cos(), r * t.sin()]
}

/// `1 / (1 + |y_i - y_j|²)`, the Student-t kernel of the map.
fn kernel(a: [f64; 2], b: [f64; 2]) -> f64 {
    1.0 / (1.0 + (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2))
}

/// The KL divergence `KL(P || Q)` and its gradient for the map `y` (gradient into `grad`).
/// `kl` is computed only when asked (it costs a logarithm per pair).
fn objective(p: &[f64], y: &[[f64; 2]], grad: &mut [[f64; 2]], with_kl: bool) -> f64 {
    let n = y.len();
    let row_sums: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| (0..n).filter(|&j| j != i).map(|j| kernel(y[i], y[j])).sum::<f64>())
        .collect();
    let z: f64 = row_sums.iter().sum();
    let kls: Vec<f64> = grad
        .par_iter_mut()
        .enumerate()
        .map(|(i, g)| {
            let (mut gx, mut gy, mut kl) = (0.0, 0.0, 0.0);
            for j in 0..n {
                if j == i {
                    continue;
                }
                let k = kernel(y[i], y[j]);
                let pij = p[i * n + j];
                let q = (k / z).max(MACHINE_EPSILON);
                let w = (pij - q) * k;
                gx += w * (y[i][0] - y[j][0]);
                gy += w * (y[i][1] - y[j][1]);
                if with_kl {
                    kl += pij * (pij.max(MACHINE_EPSILON) / q).ln();
                }
            }
            *g = [4.0 * gx, 4.0 * gy];
            kl
        })
        .collect();
    if with_kl { kls.iter().sum() } else { f64::NAN }
}

/// Where a run is: iteration done, iterations at most, and the latest KL divergence computed
/// (with exaggeration during the first 250 iterations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TsneProgress {
    pub iteration: usize,
    pub max_iter: usize,
    pub kl: f64,
}

/// Maps the points to 2-D. `progress` is called at every convergence check (every 50
/// iterations); `cancel` is read at every iteration.
pub fn tsne(
    x: &[Vec<f32>],
    spec: &TsneSpec,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(TsneProgress),
) -> Result<TsneMap, TsneError> {
    let n = x.len();
    if !(spec.perplexity.is_finite() && spec.perplexity > 0.0) {
        return Err(TsneError::Perplexity(spec.perplexity));
    }
    if n > MAX_POINTS {
        return Err(TsneError::TooMany { n });
    }
    if n < 2 || spec.perplexity >= n as f64 {
        return Err(TsneError::TooFew { n, perplexity: spec.perplexity });
    }
    if let Some((i, r)) = x.iter().enumerate().find(|(_, r)| r.len() != x[0].len()) {
        return Err(TsneError::Ragged { i, got: r.len(), want: x[0].len() });
    }
    let mut y = match spec.init {
        Init::Pca => pca_init(x)?,
        Init::Random => {
            let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
            (0..n).map(|_| gaussian_pair(&mut rng, 1e-4)).collect()
        }
    };
    let mut p = joint_probabilities(x, spec.perplexity);
    p.iter_mut().for_each(|v| *v *= spec.early_exaggeration);
    let rate = spec.rate(n);
    let mut update = vec![[0.0; 2]; n];
    let mut gains = vec![[1.0f64; 2]; n];
    let mut grad = vec![[0.0; 2]; n];
    let mut kl = f64::NAN;
    let mut it = 0;
    // Two stages as scikit-learn's `_tsne`: exaggerated with momentum 0.5, then plain with 0.8.
    let stages = [(EXPLORATION_ITER.min(spec.max_iter), 0.5, EXPLORATION_ITER), (spec.max_iter, 0.8, ITER_WITHOUT_PROGRESS)];
    for (stage, (end, momentum, patience)) in stages.into_iter().enumerate() {
        if stage == 1 {
            p.iter_mut().for_each(|v| *v /= spec.early_exaggeration);
        }
        // Each stage starts afresh, as each call of scikit-learn's `_gradient_descent` does.
        update.iter_mut().for_each(|u| *u = [0.0; 2]);
        gains.iter_mut().for_each(|g| *g = [1.0; 2]);
        let (mut best, mut best_iter) = (f64::MAX, it);
        let mut last = None;
        for i in it..end {
            if cancel.load(Ordering::Relaxed) {
                return Err(TsneError::Cancelled);
            }
            last = Some(i);
            let check = (i + 1) % CHECK_EVERY == 0;
            kl = objective(&p, &y, &mut grad, check || i + 1 == end);
            let mut norm = 0.0;
            for k in 0..n {
                for c in 0..2 {
                    let g = &mut gains[k][c];
                    if update[k][c] * grad[k][c] < 0.0 {
                        *g += 0.2;
                    } else {
                        *g *= 0.8;
                    }
                    *g = (*g).max(MIN_GAIN);
                    grad[k][c] *= *g;
                    norm += grad[k][c] * grad[k][c];
                    update[k][c] = momentum * update[k][c] - rate * grad[k][c];
                    y[k][c] += update[k][c];
                }
            }
            if check {
                progress(TsneProgress { iteration: i + 1, max_iter: spec.max_iter, kl });
                if kl < best {
                    best = kl;
                    best_iter = i;
                } else if i - best_iter > patience {
                    break;
                }
                if norm.sqrt() <= MIN_GRAD_NORM {
                    break;
                }
            }
        }
        if let Some(l) = last {
            it = l + 1;
        }
    }
    Ok(TsneMap { coords: y, kl, iterations: it })
}

/// Trustworthiness of a map (Venna & Kaski 2001, scikit-learn's `trustworthiness`): 1 minus a
/// penalty for each point among a point's `k` nearest in the map that is not among its `k`
/// nearest in the input, by how far down the input ranking it is:
/// `1 - 2 / (n k (2n - 3k - 1)) Σ_i Σ_{j ∈ U_k(i)} (r(i, j) - k)`. In [0, 1]; needs `k < n / 2`.
pub fn trustworthiness(x: &[Vec<f32>], y: &[[f64; 2]], k: usize) -> Option<f64> {
    let n = x.len();
    if n != y.len() || k == 0 || 2 * k >= n {
        return None;
    }
    let dist = squared_distances(x);
    let penalty: f64 = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut by_input: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            by_input.sort_by(|&a, &b| dist[i * n + a].total_cmp(&dist[i * n + b]).then(a.cmp(&b)));
            let mut rank = vec![0usize; n];
            for (r, &j) in by_input.iter().enumerate() {
                rank[j] = r + 1;
            }
            let d2 = |j: usize| (y[i][0] - y[j][0]).powi(2) + (y[i][1] - y[j][1]).powi(2);
            let mut by_map: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            by_map.sort_by(|&a, &b| d2(a).total_cmp(&d2(b)).then(a.cmp(&b)));
            by_map[..k].iter().map(|&j| rank[j].saturating_sub(k) as f64).sum::<f64>()
        })
        .sum();
    let (nf, kf) = (n as f64, k as f64);
    Some(1.0 - penalty * 2.0 / (nf * kf * (2.0 * nf - 3.0 * kf - 1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three tight clusters in 5-D, 20 points each, from a fixed generator.
    fn clusters() -> Vec<Vec<f32>> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        (0..60)
            .map(|i| (0..5).map(|k| (if k == i / 20 { 5.0 } else { 0.0 }) + gaussian_pair(&mut rng, 0.3)[0] as f32).collect())
            .collect()
    }

    fn run(x: &[Vec<f32>], spec: &TsneSpec) -> TsneMap {
        tsne(x, spec, &AtomicBool::new(false), &mut |_| {}).unwrap()
    }

    #[test]
    fn rows_reach_the_perplexity() {
        let x = clusters();
        let n = x.len();
        let dist = squared_distances(&x);
        let mut row = vec![0.0; n];
        conditional_row(7, &dist[7 * n..8 * n], 10.0, &mut row);
        let entropy: f64 = -row.iter().filter(|&&p| p > 0.0).map(|p| p * p.ln()).sum::<f64>();
        assert!((entropy.exp() - 10.0).abs() < 1e-3, "perplexity {}", entropy.exp());
        let p = joint_probabilities(&x, 10.0);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!((p[3 * n + 50] - p[50 * n + 3]).abs() < 1e-18 && p[5 * n + 5] == 0.0);
    }

    #[test]
    fn same_seed_same_map_and_clusters_stay_apart() {
        let x = clusters();
        let mut spec = TsneSpec::new(10.0, 1);
        spec.max_iter = 400;
        let a = run(&x, &spec);
        let b = run(&x, &spec);
        assert_eq!(a, b);
        assert!(a.kl.is_finite() && a.kl > 0.0);
        assert!(trustworthiness(&x, &a.coords, 5).unwrap() > 0.95);
        spec.init = Init::Random;
        let r1 = run(&x, &spec);
        assert_eq!(r1, run(&x, &spec));
        spec.seed = 2;
        assert_ne!(r1.coords, run(&x, &spec).coords);
    }

    #[test]
    fn bad_input_is_refused() {
        let stop = AtomicBool::new(false);
        let x = clusters();
        assert!(matches!(tsne(&x[..5], &TsneSpec::new(30.0, 0), &stop, &mut |_| {}), Err(TsneError::TooFew { .. })));
        let same = vec![vec![1.0f32, 2.0]; 10];
        assert!(matches!(tsne(&same, &TsneSpec::new(3.0, 0), &stop, &mut |_| {}), Err(TsneError::Identical)));
        let mut ragged = x.clone();
        ragged[4].pop();
        assert!(matches!(tsne(&ragged, &TsneSpec::new(5.0, 0), &stop, &mut |_| {}), Err(TsneError::Ragged { i: 4, .. })));
        let cancelled = AtomicBool::new(true);
        assert!(matches!(tsne(&x, &TsneSpec::new(5.0, 0), &cancelled, &mut |_| {}), Err(TsneError::Cancelled)));
    }
}
