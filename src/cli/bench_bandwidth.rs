//! The memory-bandwidth limit of batch-1 decode, measured in the bench itself: each generated
//! token reads the model's weights once (the GGUF's tensor bytes, [`GgufFile::decode_read_bytes`]),
//! so tokens/s cannot exceed the machine's read bandwidth divided by those bytes.

use crate::models::gguf::GgufFile;
use rayon::prelude::*;
use std::path::Path;
use std::time::Instant;

/// Bytes read per pass: far more than any CPU cache.
const BUFFER: usize = 512 << 20;
const PASSES: usize = 5;

/// Read bandwidth in bytes/s on `threads` threads: the best of [`PASSES`] sums over a
/// [`BUFFER`]-byte buffer, each thread summing its own part.
pub fn read_bandwidth(threads: usize) -> anyhow::Result<f64> {
    let words: Vec<u64> = (0..BUFFER / 8).map(|i| i as u64).collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build()?;
    let chunk = words.len().div_ceil(threads.max(1) * 8);
    let mut best = 0f64;
    let mut check = 0u64;
    for _ in 0..PASSES {
        let t = Instant::now();
        let sum = pool.install(|| {
            words.par_chunks(chunk).map(|c| c.iter().fold(0u64, |a, &w| a.wrapping_add(w))).reduce(|| 0, u64::wrapping_add)
        });
        let secs = t.elapsed().as_secs_f64();
        check = check.wrapping_add(std::hint::black_box(sum));
        best = best.max(BUFFER as f64 / secs.max(1e-9));
    }
    let n = words.len() as u64;
    anyhow::ensure!(check == (n.wrapping_mul(n.wrapping_sub(1)) / 2).wrapping_mul(PASSES as u64), "the bandwidth pass summed wrongly");
    Ok(best)
}

/// The limit line: bytes per token, bandwidth, the tokens/s they allow, and the share of it
/// `decode_tps` reached. `None` for a model that is not one GGUF file.
pub fn limit_line(model: &Path, threads: usize, decode_tps: f64) -> anyhow::Result<Option<String>> {
    if !model.is_file() {
        return Ok(None);
    }
    let bytes = GgufFile::open(model)?.decode_read_bytes() as f64;
    let bandwidth = read_bandwidth(threads)?;
    let limit = bandwidth / bytes.max(1.0);
    Ok(Some(format!(
        "batch-1 decode limit: {:.1} MB of weights read per token (the GGUF's tensors) at a read bandwidth of {:.1} GB/s \
         (measured now: {threads} threads, {} MiB, best of {PASSES}) = {limit:.1} tok/s; batch-1 decode reached {:.0}% of it",
        bytes / 1e6,
        bandwidth / 1e9,
        BUFFER >> 20,
        100.0 * decode_tps / limit.max(1e-9)
    )))
}

#[cfg(test)]
mod tests {
    #[test]
    fn bandwidth_is_measured_and_positive() {
        let b = super::read_bandwidth(1).unwrap();
        // At least 100 MB/s and at most 10 TB/s: a measurement, not a constant.
        assert!(b > 1e8 && b < 1e13, "{b}");
    }
}
