//! `LayerNorm(mm + bias + residual)` in one pass over the rows: the BERT encoder's dense
//! output, its residual and its norm (CPU, when the encoder's fused kernels are on). Mean and
//! variance are summed in f64.

use candle_core::{CpuStorage, CustomOp2, Layout, Shape, Tensor};
use rayon::prelude::*;

/// The bias of a dense layer and the LayerNorm that follows it, as one kernel.
pub struct AddNorm {
    bias: Vec<f32>,
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl AddNorm {
    /// From the dense layer's `bias` and the norm's `gamma` (weight), `beta` (bias) and `eps`.
    pub fn new(bias: &Tensor, gamma: &Tensor, beta: &Tensor, eps: f32) -> candle_core::Result<AddNorm> {
        Ok(AddNorm { bias: bias.to_vec1()?, gamma: gamma.to_vec1()?, beta: beta.to_vec1()?, eps })
    }

    /// `LayerNorm(mm + bias + residual)` of `[n, width]` tensors.
    pub fn forward(&self, mm: &Tensor, residual: &Tensor) -> candle_core::Result<Tensor> {
        mm.apply_op2_no_bwd(&residual.contiguous()?, self)
    }
}

impl CustomOp2 for AddNorm {
    fn name(&self) -> &'static str {
        "bias-residual-layer-norm"
    }

    #[allow(clippy::needless_range_loop)]
    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let (mm, res) = (super::contiguous_f32(s1, l1)?, super::contiguous_f32(s2, l2)?);
        let n = self.bias.len();
        if mm.len() != res.len() || mm.len() % n != 0 {
            candle_core::bail!("add-norm: shapes {:?} and {:?} for width {n}", l1.shape(), l2.shape());
        }
        let mut out = vec![0f32; mm.len()];
        out.par_chunks_mut(n).zip(mm.par_chunks(n).zip(res.par_chunks(n))).for_each(|(o, (m, r))| {
            for i in 0..n {
                o[i] = m[i] + self.bias[i] + r[i];
            }
            let mean = o.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
            let var = o.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n as f64;
            let (mean, inv) = (mean as f32, (1.0 / (var + f64::from(self.eps)).sqrt()) as f32);
            for i in 0..n {
                o[i] = (o[i] - mean) * inv * self.gamma[i] + self.beta[i];
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::kernels::test_values as values;
    use candle_core::Device;

    #[test]
    fn equals_a_plain_layer_norm_of_the_sum() {
        let (n, w, eps) = (6, 40, 1e-12f32);
        let t = |v: Vec<f32>, shape: &[usize]| Tensor::from_vec(v, shape, &Device::Cpu).unwrap();
        let (mm, res) = (values(n * w, 1), values(n * w, 2));
        let (bias, gamma, beta) = (values(w, 3), values(w, 4), values(w, 5));
        let op = AddNorm::new(&t(bias.clone(), &[w]), &t(gamma.clone(), &[w]), &t(beta.clone(), &[w]), eps).unwrap();
        let got = op.forward(&t(mm.clone(), &[n, w]), &t(res.clone(), &[n, w])).unwrap().to_vec2::<f32>().unwrap();
        for r in 0..n {
            let x: Vec<f64> = (0..w).map(|i| (mm[r * w + i] + bias[i] + res[r * w + i]) as f64).collect();
            let mean = x.iter().sum::<f64>() / w as f64;
            let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / w as f64;
            for i in 0..w {
                let want = (x[i] - mean) / (var + eps as f64).sqrt() * gamma[i] as f64 + beta[i] as f64;
                assert!((got[r][i] as f64 - want).abs() <= 1e-5 * (1.0 + want.abs()), "{r},{i}: {} vs {want}", got[r][i]);
            }
        }
    }

    #[test]
    fn refuses_a_width_that_does_not_divide() {
        let t = |n: usize| Tensor::from_vec(values(n, 1), n, &Device::Cpu).unwrap();
        let op = AddNorm::new(&t(4), &t(4), &t(4), 1e-5).unwrap();
        assert!(op.forward(&t(10), &t(10)).is_err());
    }
}
