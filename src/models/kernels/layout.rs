//! Moves between the llama forward's packed tokens (`[n, heads * hd]`, only real tokens) and
//! the padded attention layout (`[rows, kv, group * w, hd]`), in one pass each on the CPU
//! (candle's strided copies were a tenth of a decode step). Other devices do the same with
//! candle ops (`index_select` and `permute`, in the llama file).

use candle_core::{CpuStorage, CustomOp1, Layout, Shape, Tensor};
use std::sync::Arc;

/// Where packed tokens go in the padded attention layout `[rows, kv, group * w, hd]`: head
/// `g * group + gi` of the token in slot `(r, j)` is row `r`, kv head `g`, position `gi * w + j`.
#[derive(Clone)]
pub struct PadLayout {
    /// Padded slot `r * w + j` of each packed token.
    slots: Arc<Vec<u32>>,
    w: usize,
    kv: usize,
    group: usize,
    hd: usize,
}

impl PadLayout {
    /// `slots[t]`: the padded slot `r * w + j` of packed token `t`; `kv` key/value heads of
    /// `group` query heads each, of `hd` values.
    pub fn new(slots: Arc<Vec<u32>>, w: usize, kv: usize, group: usize, hd: usize) -> PadLayout {
        PadLayout { slots, w, kv, group, hd }
    }

    /// (packed token, head, offset of its `hd` values in the padded layout), for every token
    /// and head.
    fn moves(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let (w, kv, group, hd) = (self.w, self.kv, self.group, self.hd);
        self.slots.iter().enumerate().flat_map(move |(t, &slot)| {
            let (r, j) = (slot as usize / w, slot as usize % w);
            (0..kv * group).map(move |head| {
                let (g, gi) = (head / group, head % group);
                (t, head, ((r * kv + g) * group * w + gi * w + j) * hd)
            })
        })
    }
}

/// Packed rows `x [n, cols]` (columns `col0..` hold `kv * group` heads of `hd`) into the padded
/// layout of `rows` rows: `[rows, kv, group * w, hd]`. Slots without a token are zero. CPU only.
pub fn to_padded(x: &Tensor, layout: &PadLayout, rows: usize, col0: usize) -> candle_core::Result<Tensor> {
    x.apply_op1_no_bwd(&ToPadded { layout: layout.clone(), rows, col0 })
}

/// The inverse of [`to_padded`] (all heads, `col0` 0): `[rows, kv, group * w, hd]` to
/// `[n, kv * group * hd]`. CPU only.
pub fn from_padded(y: &Tensor, layout: &PadLayout) -> candle_core::Result<Tensor> {
    y.apply_op1_no_bwd(&FromPadded(layout.clone()))
}

struct ToPadded {
    layout: PadLayout,
    rows: usize,
    col0: usize,
}

impl CustomOp1 for ToPadded {
    fn name(&self) -> &'static str {
        "tstlab-to-padded"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(x) = s else { candle_core::bail!("to-padded: f32 only") };
        let Some((a, b)) = l.contiguous_offsets() else { candle_core::bail!("to-padded: input must be contiguous") };
        let (n, cols) = l.shape().dims2()?;
        let PadLayout { w, kv, group, hd, .. } = self.layout;
        if n != self.layout.slots.len() || self.col0 + kv * group * hd > cols {
            candle_core::bail!("to-padded: shape mismatch")
        }
        let x = &x[a..b];
        let mut out = vec![0f32; self.rows * kv * group * w * hd];
        for (t, head, dst) in self.layout.moves() {
            let src = t * cols + self.col0 + head * hd;
            out[dst..dst + hd].copy_from_slice(&x[src..src + hd]);
        }
        Ok((CpuStorage::F32(out), Shape::from((self.rows, kv, group * w, hd))))
    }
}

struct FromPadded(PadLayout);

impl CustomOp1 for FromPadded {
    fn name(&self) -> &'static str {
        "tstlab-from-padded"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(y) = s else { candle_core::bail!("from-padded: f32 only") };
        let Some((a, b)) = l.contiguous_offsets() else { candle_core::bail!("from-padded: input must be contiguous") };
        let (rows, kv, gw, hd) = l.shape().dims4()?;
        let PadLayout { ref slots, w, group, .. } = self.0;
        if kv != self.0.kv || hd != self.0.hd || gw != group * w || slots.iter().any(|&s| s as usize >= rows * w) {
            candle_core::bail!("from-padded: shape mismatch")
        }
        let y = &y[a..b];
        let heads = kv * group;
        let mut out = vec![0f32; slots.len() * heads * hd];
        for (t, head, src) in self.0.moves() {
            let dst = (t * heads + head) * hd;
            out[dst..dst + hd].copy_from_slice(&y[src..src + hd]);
        }
        Ok((CpuStorage::F32(out), Shape::from((slots.len(), heads * hd))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// 3 rows of width 4 holding 4, 1 and 3 tokens right-aligned; kv 2 heads of group 3, hd 5.
    fn case() -> (PadLayout, usize, usize) {
        let (rows, w) = (3, 4);
        let counts = [4, 1, 3];
        let slots: Vec<u32> = (0..rows).flat_map(|r| (w - counts[r]..w).map(move |j| (r * w + j) as u32)).collect();
        (PadLayout::new(Arc::new(slots), w, 2, 3, 5), rows, w)
    }

    #[test]
    fn packed_heads_land_where_a_plain_loop_puts_them_and_come_back() {
        let (layout, rows, w) = case();
        let (kv, group, hd, n) = (2, 3, 5, layout.slots.len());
        let col0 = 7;
        let cols = col0 + kv * group * hd + 4;
        let x = crate::models::kernels::test_values(n * cols, 3);
        let xt = Tensor::from_vec(x.clone(), (n, cols), &Device::Cpu).unwrap();
        let padded = to_padded(&xt, &layout, rows, col0).unwrap();
        assert_eq!(padded.dims(), &[rows, kv, group * w, hd]);
        let got = padded.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        // The plain loop: every (row, slot, head, value).
        let mut want = vec![0f32; got.len()];
        for (t, &slot) in layout.slots.iter().enumerate() {
            let (r, j) = (slot as usize / w, slot as usize % w);
            for g in 0..kv {
                for gi in 0..group {
                    for d in 0..hd {
                        want[(((r * kv + g) * group + gi) * w + j) * hd + d] = x[t * cols + col0 + (g * group + gi) * hd + d];
                    }
                }
            }
        }
        assert_eq!(got, want);
        let back = from_padded(&padded, &layout).unwrap().to_vec2::<f32>().unwrap();
        for (t, row) in back.iter().enumerate() {
            assert_eq!(row[..], x[t * cols + col0..t * cols + col0 + kv * group * hd], "token {t}");
        }
    }

    #[test]
    fn refuses_mismatched_shapes() {
        let (layout, rows, _) = case();
        let x = Tensor::zeros((layout.slots.len() + 1, 30), candle_core::DType::F32, &Device::Cpu).unwrap();
        assert!(to_padded(&x, &layout, rows, 0).is_err());
        let y = Tensor::zeros((rows, 2, 5, 5), candle_core::DType::F32, &Device::Cpu).unwrap();
        assert!(from_padded(&y, &layout).is_err());
    }
}
