//! `x · Wᵀ` on the CPU with AVX-512 or AVX2 for the llama forward's linear layers, and
//! [`Linear`], the weight in the layout its matmul is fastest with.
//!
//! The weight is packed once into panels of [`NR`] outputs, `k`-major inside a panel, stored
//! as f16 (half the memory traffic; the products and sums are f32), so the inner loop loads and
//! widens two vectors of weights and multiplies them with up to [`MR`] broadcast inputs into 24
//! register accumulators. f16 keeps 11 significant bits: the weights of a 4-bit quantized model
//! (scale times a 4-bit integer plus an offset, both f16) lose at most 1/2048 of their value.
//! Each output is one dot product summed in `k` order, so a row's result does not depend on the
//! other rows of the call (batched equals one-by-one, bit for bit). On the 2-core development
//! machine `tstlab bench transfer --batch 50` ran about twice as fast with it as with candle's
//! f32 gemm (`TSTLAB_CANDLE_MATMUL=1`).
//!
//! CPUs without AVX-512F but with AVX2, FMA and F16C ([`super::avx2_f16c`]) run the same panels
//! with an AVX2 micro-kernel ([`PanelKernel::Avx2`]): half a panel (16 outputs, two 8-lane
//! vectors) against up to [`MR_AVX2`] rows, 12 accumulators of the 16 vector registers, the
//! half panel kept in the L1 cache while the rows pass. Each output is the same FMA chain in
//! `k` order as on AVX-512, so the two kernels give the same bits. CPUs with neither keep
//! candle's matmul. `TSTLAB_SIMD=avx2` ([`super::SIMD_VAR`]) takes the AVX2 kernel on an
//! AVX-512 CPU.

use candle_core::{CpuStorage, CustomOp1, Layout, Shape, Tensor};
use rayon::prelude::*;
use super::quant::{self, QuantMatmul, QuantMatrix, QuantType, Simd};

/// Outputs per panel (two 16-lane vectors).
pub(crate) const NR: usize = 32;
/// Most rows per micro-kernel call (2 × 12 accumulators of the 32 vector registers).
const MR: usize = 12;
/// Most rows per AVX2 micro-kernel call (2 × 6 accumulators, 2 weight vectors and a broadcast
/// input of the 16 vector registers).
pub const MR_AVX2: usize = 6;
/// Rows per pass over the panels (their inputs stay in the L2 cache).
const ROW_CHUNK: usize = 120;

/// Whether linear layers pack their weights: a [`PanelKernel`] runs on this CPU, unless the
/// environment variable `TSTLAB_CANDLE_MATMUL` is set (to compare with candle's gemm in
/// `tstlab bench transfer`).
pub fn enabled() -> bool {
    PanelKernel::best().is_some() && std::env::var_os("TSTLAB_CANDLE_MATMUL").is_none()
}

/// The micro-kernel the packed matmul runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelKernel {
    /// AVX-512F: a whole panel by up to 12 rows.
    Avx512,
    /// AVX2, FMA and F16C: half a panel by up to [`MR_AVX2`] rows.
    Avx2,
}

impl PanelKernel {
    /// The best one this CPU has within `TSTLAB_SIMD` (none: candle's gemm).
    pub fn best() -> Option<PanelKernel> {
        if super::avx512() {
            Some(PanelKernel::Avx512)
        } else if super::avx2_f16c() {
            Some(PanelKernel::Avx2)
        } else {
            None
        }
    }

    /// Whether this CPU has it (within `TSTLAB_SIMD`).
    pub fn available(self) -> bool {
        match self {
            PanelKernel::Avx512 => super::avx512(),
            PanelKernel::Avx2 => super::avx2_f16c(),
        }
    }

    /// As [`Llama::kernels`](crate::models::llama::Llama::kernels) names it.
    pub fn label(self) -> &'static str {
        match self {
            PanelKernel::Avx512 => "AVX-512",
            PanelKernel::Avx2 => "AVX2",
        }
    }
}

/// Which weights a call may use: the quantized blocks for calls of a few rows (generation's
/// steps: fastest), or always the dense layout (scoring: the same values whatever the batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Path {
    #[default]
    Fastest,
    Dense,
}

/// A weight matrix in the layout its matmul is fastest with ([`Dense`]), and, when it came
/// from a GGUF file in blocks [`quant`](super::quant) has a kernel for, those blocks too: calls
/// of at most `quant_rows` rows (batch-1 decode, [`super::quant::max_rows`] by default) use them,
/// larger ones (prefill, batches) the dense layout.
pub struct Linear {
    dense: Dense,
    quant: Option<QuantMatrix>,
    quant_rows: usize,
    /// The kernel the quantized blocks run with (the model's one choice: see
    /// [`Linear::set_quant_kernel`]).
    kernel: Simd,
}

/// The dense layouts. With a [`PanelKernel`] on the CPU: packed for [`PackedMatrix`]. Otherwise for
/// candle's gemm (measured with AVX-512 kernels, 2 threads, 50 to 900 rows): a wide matrix (many
/// outputs: the MLP's gate/up, the vocabulary head) as loaded, `[out, in]`, used transposed; a
/// narrow one transposed once at load to `[in, out]`. At 50 rows the wrong layout costs a third
/// to a half.
pub enum Dense {
    Packed(PackedMatrix),
    /// `[out, in]`
    OutIn(Tensor),
    /// `[in, out]`
    InOut(Tensor),
}

impl Linear {
    const WIDE: usize = 2048;

    /// From a `[out, in]` tensor.
    pub fn new(w: Tensor) -> candle_core::Result<Linear> {
        if w.device().is_cpu() && enabled() {
            return Ok(Linear::from_dense(Dense::Packed(PackedMatrix::from_tensor(&w)?)));
        }
        Linear::unpacked(w)
    }

    /// From a `[out, in]` tensor, for candle's f32 gemm on any CPU (never packed as f16): for
    /// models checked against f32 references to 1e-4 (`gpt2.rs`).
    pub fn unpacked(w: Tensor) -> candle_core::Result<Linear> {
        let dense = if w.dim(0)? >= Linear::WIDE { Dense::OutIn(w) } else { Dense::InOut(w.t()?.contiguous()?) };
        Ok(Linear::from_dense(dense))
    }

    /// From a dense layout, without quantized blocks.
    pub fn from_dense(dense: Dense) -> Linear {
        Linear { dense, quant: None, quant_rows: 0, kernel: quant::simd() }
    }

    /// Keeps the weight's quantized blocks too (same `[out, in]` shape; CPU only), used up to
    /// [`super::quant::max_rows`] rows.
    pub fn with_quant(mut self, q: QuantMatrix) -> Linear {
        self.quant_rows = quant::max_rows();
        self.kernel = q.kernel(quant::simd());
        self.quant = Some(q);
        self
    }

    /// The quantized blocks run with `kernel` (quantizing their inputs for it): a model picks
    /// one for all its matrices, so that a step gives the same bits whichever way it runs.
    /// Must be one the blocks have ([`QuantMatrix::kernel`]).
    pub fn set_quant_kernel(&mut self, kernel: Simd) {
        if let Some(q) = &self.quant {
            assert_eq!(q.kernel(kernel), kernel, "no {kernel:?} kernel for {:?}", q.quant_types());
        }
        self.kernel = kernel;
    }

    /// Calls of at most `rows` rows use the quantized blocks (0: never).
    pub fn set_quant_rows(&mut self, rows: usize) {
        self.quant_rows = rows;
    }

    /// Whether the weight is packed for the panel matmul.
    pub fn is_packed(&self) -> bool {
        matches!(self.dense, Dense::Packed(_))
    }

    /// How the dense layout holds the values: `f16` (packed) or the tensor's type (`f32`, ...).
    pub fn dense_precision(&self) -> String {
        match &self.dense {
            Dense::Packed(_) => "f16".into(),
            Dense::OutIn(w) | Dense::InOut(w) => format!("{:?}", w.dtype()).to_lowercase(),
        }
    }

    /// The quantized blocks, if kept.
    pub fn quant(&self) -> Option<&QuantMatrix> {
        self.quant.as_ref()
    }

    /// The quantized blocks, if kept and used for calls of `rows` rows.
    pub fn quant_at(&self, rows: usize) -> Option<&QuantMatrix> {
        self.quant.as_ref().filter(|_| rows <= self.quant_rows)
    }

    /// The GGUF types of the quantized blocks kept (none without).
    pub fn quant_types(&self) -> &[QuantType] {
        self.quant.as_ref().map_or(&[], |q| q.quant_types())
    }

    /// `x [n, in]` times the weight: `[n, out]` (the quantized blocks up to `quant_rows` rows).
    pub fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        self.forward_on(x, Path::Fastest)
    }

    /// [`Linear::forward`] on the given [`Path`].
    pub fn forward_on(&self, x: &Tensor, path: Path) -> candle_core::Result<Tensor> {
        if let Some(q) = &self.quant
            && path == Path::Fastest
            && x.dim(0)? <= self.quant_rows
            && x.device().is_cpu()
        {
            return x.contiguous()?.apply_op1_no_bwd(&QuantMatmul(q, self.kernel));
        }
        match &self.dense {
            Dense::Packed(p) => x.contiguous()?.apply_op1_no_bwd(&PackedMatmul(p)),
            Dense::OutIn(w) => x.matmul(&w.t()?),
            Dense::InOut(w) => x.matmul(w),
        }
    }
}

/// A `[n, k]` weight (`n` outputs of `k` inputs) packed for [`PackedMatrix::matmul`].
pub struct PackedMatrix {
    n: usize,
    k: usize,
    /// `ceil(n / NR)` panels of `[k][NR]` f16 values, outputs past `n` zero.
    panels: Vec<half::f16>,
}

impl PackedMatrix {
    /// Packs a row-major `[n, k]` matrix.
    pub fn pack(w: &[f32], n: usize, k: usize) -> PackedMatrix {
        assert_eq!(w.len(), n * k, "weight of {} values is not {n} x {k}", w.len());
        let np = n.div_ceil(NR);
        let mut panels = vec![half::f16::ZERO; np * k * NR];
        panels.par_chunks_mut(k * NR).enumerate().for_each(|(p, panel)| fill_panel(panel, w, n, k, p, half::f16::from_f32));
        PackedMatrix { n, k, panels }
    }

    /// Packs a `[n, k]` tensor (any dtype; converted to f32).
    pub fn from_tensor(w: &Tensor) -> candle_core::Result<PackedMatrix> {
        let (n, k) = w.dims2()?;
        let v = w.to_dtype(candle_core::DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
        Ok(PackedMatrix::pack(&v, n, k))
    }

    /// `y [m, n] = x [m, k] · Wᵀ` for row-major `x`, with [`PanelKernel::best`]. Panics
    /// without one.
    pub fn matmul(&self, x: &[f32], m: usize) -> Vec<f32> {
        let kernel = PanelKernel::best().expect("the packed matmul needs AVX-512F or AVX2+FMA+F16C");
        self.matmul_with(kernel, x, m)
    }

    /// [`PackedMatrix::matmul`] with the given kernel (both give the same bits). Panics when the
    /// CPU does not have it ([`PanelKernel::available`]).
    pub fn matmul_with(&self, kernel: PanelKernel, x: &[f32], m: usize) -> Vec<f32> {
        assert!(kernel.available(), "no {kernel:?} packed matmul on this CPU");
        let (n, k) = (self.n, self.k);
        assert_eq!(x.len(), m * k, "input of {} values is not {m} x {k}", x.len());
        if m == 0 || n == 0 {
            return vec![0f32; m * n];
        }
        // Every value is written below (full panels by the kernel, the last partial one by a
        // copy), so the output is not zeroed first (that cost a few percent of a run).
        let mut y: Vec<f32> = Vec::with_capacity(m * n);
        let np = n.div_ceil(NR);
        let out = OutPtr(y.as_mut_ptr());
        for r0 in (0..m).step_by(ROW_CHUNK) {
            let rows = ROW_CHUNK.min(m - r0);
            (0..np).into_par_iter().for_each(|p| {
                let out = &out;
                let panel = &self.panels[p * k * NR..(p + 1) * k * NR];
                let cols = NR.min(n - p * NR);
                let xs = x[r0 * k..(r0 + rows) * k].as_ptr();
                // SAFETY: the kernel's instructions are available (asserted); the x rows and the
                // panel hold rows x k and k x NR values; `y` is inside the output, rows x NR at
                // stride `ldy`, written by this panel's task only.
                let product = |y: *mut f32, ldy: usize| unsafe {
                    match kernel {
                        PanelKernel::Avx512 => panel_product(rows, xs, k, k, panel.as_ptr(), NR, y, ldy),
                        PanelKernel::Avx2 => panel_product_avx2(rows, xs, k, k, panel.as_ptr(), y, ldy),
                    }
                };
                if cols == NR {
                    // Rows r0..r0+rows of y, columns p*NR..p*NR+NR.
                    // SAFETY: inside y (m x n values).
                    product(unsafe { out.0.add(r0 * n + p * NR) }, n);
                } else {
                    let mut tmp = vec![0f32; rows * NR];
                    product(tmp.as_mut_ptr(), NR);
                    for i in 0..rows {
                        // SAFETY: row r0+i, columns p*NR..p*NR+cols are inside y, this task's.
                        unsafe { std::ptr::copy_nonoverlapping(tmp[i * NR..].as_ptr(), out.0.add((r0 + i) * n + p * NR), cols) };
                    }
                }
            });
        }
        // SAFETY: all m x n values were written above.
        unsafe { y.set_len(m * n) };
        y
    }
}

/// Fills panel `p` (`[k][NR]`, outputs `p * NR..`) from the row-major `[n, k]` matrix `w`;
/// outputs past `n` are left as they are.
pub(crate) fn fill_panel<T>(panel: &mut [T], w: &[f32], n: usize, k: usize, p: usize, conv: impl Fn(f32) -> T) {
    for j in p * NR..((p + 1) * NR).min(n) {
        for (kk, &v) in w[j * k..(j + 1) * k].iter().enumerate() {
            panel[kk * NR + j % NR] = conv(v);
        }
    }
}

/// The output pointer shared by the panel tasks (each writes its own columns).
struct OutPtr(*mut f32);
// SAFETY: tasks write disjoint column ranges of the output.
unsafe impl Sync for OutPtr {}

/// Rows `x [m, k]` (row stride `ldx`) times one panel `w [k][NR]` (f32 or f16, row stride `ldw`) into `y`
/// (`m` rows of `NR` at stride `ldy`), in blocks of at most [`MR`] rows.
///
/// # Safety
/// AVX-512F must be available, and the three regions must hold what is described.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn panel_product<W: avx512::Lanes>(
    m: usize,
    x: *const f32,
    ldx: usize,
    k: usize,
    w: *const W,
    ldw: usize,
    y: *mut f32,
    ldy: usize,
) {
    let mut r = 0;
    while r < m {
        // Even blocks: 50 rows go as 5 x 10, not 4 x 12 + 2.
        let left = m - r;
        let mr = left.div_ceil(left.div_ceil(MR));
        // SAFETY: rows r..r+mr are inside x and y (the caller's guarantee).
        let (xr, yr) = unsafe { (x.add(r * ldx), y.add(r * ldy)) };
        macro_rules! rows {
            ($($m:literal)*) => {
                match mr {
                    $($m => unsafe { avx512::micro::<W, $m>(xr, ldx, k, w, ldw, yr, ldy) },)*
                    _ => unreachable!("block of {mr} rows"),
                }
            };
        }
        rows!(1 2 3 4 5 6 7 8 9 10 11 12);
        r += mr;
    }
}

/// Rows `x [m, k]` (row stride `ldx`) times one f16 panel `w [k][NR]` (row stride [`NR`]) into
/// `y` (`m` rows of `NR` at stride `ldy`) with AVX2: each half of the panel (16 outputs) against
/// the rows in blocks of at most [`MR_AVX2`], so the half panel stays in the L1 cache.
///
/// # Safety
/// AVX2, FMA and F16C must be available, and the three regions must hold what is described.
pub(crate) unsafe fn panel_product_avx2(m: usize, x: *const f32, ldx: usize, k: usize, w: *const half::f16, y: *mut f32, ldy: usize) {
    for half in [0, NR / 2] {
        let mut r = 0;
        while r < m {
            // Even blocks, as in `panel_product`: 50 rows go as 5 x 6 + 4 x 5.
            let left = m - r;
            let mr = left.div_ceil(left.div_ceil(MR_AVX2));
            // SAFETY: rows r..r+mr and columns half..half+16 are inside x, w and y (the
            // caller's guarantee).
            let (xr, wh, yr) = unsafe { (x.add(r * ldx), w.add(half), y.add(r * ldy + half)) };
            macro_rules! rows {
                ($($m:literal)*) => {
                    match mr {
                        $($m => unsafe { avx2::micro::<$m>(xr, ldx, k, wh, NR, yr, ldy) },)*
                        _ => unreachable!("block of {mr} rows"),
                    }
                };
            }
            rows!(1 2 3 4 5 6);
            r += mr;
        }
    }
}

/// `y[i][j] = x_i · w_j` for `m` rows of `x` (stride `ldx`) and `n` rows of `w` (stride `ldw`),
/// `k` values each, `k` a multiple of 16: one dot product at a time, for a few rows against
/// weights that are not worth packing (attention keys at decode time).
///
/// # Safety
/// AVX-512F must be available, and the three regions must hold what is described.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn dots(m: usize, x: *const f32, ldx: usize, k: usize, w: *const f32, ldw: usize, n: usize, y: *mut f32, ldy: usize) {
    debug_assert!(k.is_multiple_of(16));
    // SAFETY: the caller's guarantee.
    unsafe { avx512::dots(m, x, ldx, k, w, ldw, n, y, ldy) }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// Panel values the kernel can load as 16 f32 lanes.
    pub trait Lanes: Copy {
        /// # Safety
        /// AVX-512F; 16 values readable at `p`.
        unsafe fn load16(p: *const Self) -> __m512;
    }

    impl Lanes for f32 {
        #[inline(always)]
        unsafe fn load16(p: *const f32) -> __m512 {
            // SAFETY: the caller's guarantee.
            unsafe { _mm512_loadu_ps(p) }
        }
    }

    impl Lanes for half::f16 {
        #[inline(always)]
        unsafe fn load16(p: *const half::f16) -> __m512 {
            // SAFETY: the caller's guarantee; f16 is 16 bits, as the conversion reads them.
            unsafe { _mm512_cvtph_ps(_mm256_loadu_si256(p as *const __m256i)) }
        }
    }

    /// `M` rows of `x` (stride `ldx`, `k` used) times a `[k][NR]` panel (row stride `ldw`);
    /// `y` gets `M` rows of `NR`.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn micro<W: Lanes, const M: usize>(
        x: *const f32,
        ldx: usize,
        k: usize,
        w: *const W,
        ldw: usize,
        y: *mut f32,
        ldy: usize,
    ) {
        let mut acc = [[_mm512_setzero_ps(); 2]; M];
        for kk in 0..k {
            // SAFETY (whole function): the caller guarantees M rows of k inputs at stride ldx,
            // k rows of NR weights at stride ldw and M x NR outputs at stride ldy.
            let w0 = unsafe { W::load16(w.add(kk * ldw)) };
            let w1 = unsafe { W::load16(w.add(kk * ldw + 16)) };
            for (r, a) in acc.iter_mut().enumerate() {
                let b = _mm512_set1_ps(unsafe { *x.add(r * ldx + kk) });
                a[0] = _mm512_fmadd_ps(b, w0, a[0]);
                a[1] = _mm512_fmadd_ps(b, w1, a[1]);
            }
        }
        for (r, a) in acc.iter().enumerate() {
            unsafe {
                _mm512_storeu_ps(y.add(r * ldy), a[0]);
                _mm512_storeu_ps(y.add(r * ldy + 16), a[1]);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f")]
    pub unsafe fn dots(m: usize, x: *const f32, ldx: usize, k: usize, w: *const f32, ldw: usize, n: usize, y: *mut f32, ldy: usize) {
        for j in 0..n {
            // SAFETY (whole function): the caller guarantees m rows of x, n rows of w, k values
            // each (a multiple of 16), and m x n outputs at stride ldy.
            let wr = unsafe { w.add(j * ldw) };
            for i in 0..m {
                let xr = unsafe { x.add(i * ldx) };
                let (mut a0, mut a1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
                let mut kk = 0;
                while kk + 32 <= k {
                    unsafe {
                        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(xr.add(kk)), _mm512_loadu_ps(wr.add(kk)), a0);
                        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(xr.add(kk + 16)), _mm512_loadu_ps(wr.add(kk + 16)), a1);
                    }
                    kk += 32;
                }
                if kk < k {
                    unsafe { a0 = _mm512_fmadd_ps(_mm512_loadu_ps(xr.add(kk)), _mm512_loadu_ps(wr.add(kk)), a0) };
                }
                unsafe { *y.add(i * ldy + j) = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) };
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// `M` rows of `x` (stride `ldx`, `k` used) times 16 columns of f16 weights (`k` rows at
    /// stride `ldw`); `y` gets `M` rows of 16.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn micro<const M: usize>(x: *const f32, ldx: usize, k: usize, w: *const half::f16, ldw: usize, y: *mut f32, ldy: usize) {
        let mut acc = [[_mm256_setzero_ps(); 2]; M];
        for kk in 0..k {
            // SAFETY (whole function): the caller guarantees M rows of k inputs at stride ldx,
            // k rows of 16 weights at stride ldw and M x 16 outputs at stride ldy.
            let (w0, w1) = unsafe {
                let p = w.add(kk * ldw) as *const __m128i;
                (_mm256_cvtph_ps(_mm_loadu_si128(p)), _mm256_cvtph_ps(_mm_loadu_si128(p.add(1))))
            };
            for (r, a) in acc.iter_mut().enumerate() {
                let b = _mm256_set1_ps(unsafe { *x.add(r * ldx + kk) });
                a[0] = _mm256_fmadd_ps(b, w0, a[0]);
                a[1] = _mm256_fmadd_ps(b, w1, a[1]);
            }
        }
        for (r, a) in acc.iter().enumerate() {
            unsafe {
                _mm256_storeu_ps(y.add(r * ldy), a[0]);
                _mm256_storeu_ps(y.add(r * ldy + 8), a[1]);
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod avx2 {
    pub unsafe fn micro<const M: usize>(_: *const f32, _: usize, _: usize, _: *const half::f16, _: usize, _: *mut f32, _: usize) {
        unreachable!("the AVX2 packed matmul needs x86-64")
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod avx512 {
    pub trait Lanes: Copy {}
    impl Lanes for f32 {}
    impl Lanes for half::f16 {}
    pub unsafe fn micro<W: Lanes, const M: usize>(_: *const f32, _: usize, _: usize, _: *const W, _: usize, _: *mut f32, _: usize) {
        unreachable!("the packed matmul needs AVX-512F")
    }
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn dots(_: usize, _: *const f32, _: usize, _: usize, _: *const f32, _: usize, _: usize, _: *mut f32, _: usize) {
        unreachable!("needs AVX-512F")
    }
}

/// The packed matmul as a candle op on `[m, k]` f32 CPU tensors.
pub struct PackedMatmul<'a>(pub &'a PackedMatrix);

impl CustomOp1 for PackedMatmul<'_> {
    fn name(&self) -> &'static str {
        "tstlab-packed-matmul"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(x) = s else { candle_core::bail!("packed matmul: f32 input only") };
        let (m, k) = l.shape().dims2()?;
        if k != self.0.k {
            candle_core::bail!("packed matmul: input has {k} columns, the weight {}", self.0.k)
        }
        let Some((a, b)) = l.contiguous_offsets() else { candle_core::bail!("packed matmul: input must be contiguous") };
        Ok((CpuStorage::F32(self.0.matmul(&x[a..b], m)), Shape::from((m, self.0.n))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::kernels::test_values as values;

    fn reference(x: &[f32], w: &[f32], m: usize, n: usize, k: usize) -> Vec<f64> {
        let mut y = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                y[i * n + j] = (0..k).map(|t| x[i * k + t] as f64 * half::f16::from_f32(w[j * k + t]).to_f64()).sum();
            }
        }
        y
    }

    /// The panel kernels this CPU has (both on an AVX-512 CPU), each tested.
    fn kernels() -> Vec<PanelKernel> {
        let v: Vec<PanelKernel> = [PanelKernel::Avx512, PanelKernel::Avx2].into_iter().filter(|k| k.available()).collect();
        if v.is_empty() {
            eprintln!("not applicable on this CPU: neither AVX-512F nor AVX2+FMA+F16C (the packed matmul is not used here)");
        }
        v
    }

    #[test]
    fn equals_the_plain_product_with_f16_weights_for_odd_shapes() {
        for kernel in kernels() {
            // Rows: 1, 5, 7 and 13 leave partial blocks of both kernels; 50 and 121 cross a
            // block and a ROW_CHUNK; outputs: partial panels and partial halves (n 33, 40, 100).
            for &(m, n, k) in &[(1, 1, 1), (1, 32, 7), (3, 33, 5), (5, 16, 3), (7, 48, 20), (13, 64, 64), (50, 100, 31), (121, 40, 17), (250, 96, 9)] {
                let x = values(m * k, (m * 31 + k) as u64);
                let w = values(n * k, (n * 7 + k) as u64);
                let y = PackedMatrix::pack(&w, n, k).matmul_with(kernel, &x, m);
                assert_eq!(y.len(), m * n);
                let r = reference(&x, &w, m, n, k);
                for (i, (a, b)) in y.iter().zip(&r).enumerate() {
                    assert!((*a as f64 - b).abs() <= 1e-5 * (1.0 + b.abs()), "{kernel:?} m {m} n {n} k {k} at {i}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn a_row_gives_the_same_bits_alone_or_in_a_batch() {
        for kernel in kernels() {
            let (m, n, k) = (37, 70, 45);
            let x = values(m * k, 1);
            let p = PackedMatrix::pack(&values(n * k, 2), n, k);
            let all = p.matmul_with(kernel, &x, m);
            for i in [0, 11, 36] {
                let one = p.matmul_with(kernel, &x[i * k..(i + 1) * k], 1);
                assert_eq!(one, all[i * n..(i + 1) * n].to_vec(), "{kernel:?} row {i}");
            }
        }
    }

    #[test]
    fn the_avx2_kernel_gives_the_avx512_kernels_bits() {
        if kernels().len() < 2 {
            eprintln!("not applicable on this CPU: it does not have both panel kernels");
            return;
        }
        for &(m, n, k) in &[(1, 70, 45), (50, 576, 576), (121, 100, 1536)] {
            let x = values(m * k, 5);
            let p = PackedMatrix::pack(&values(n * k, 6), n, k);
            assert_eq!(p.matmul_with(PanelKernel::Avx512, &x, m), p.matmul_with(PanelKernel::Avx2, &x, m), "m {m} n {n} k {k}");
        }
    }

    #[test]
    fn every_linear_layout_gives_the_plain_product() {
        let (m, n, k) = (7, 2050, 19);
        let x = values(m * k, 3);
        let w = values(n * k, 4);
        let dev = candle_core::Device::Cpu;
        let xt = Tensor::from_vec(x.clone(), (m, k), &dev).unwrap();
        let wt = Tensor::from_vec(w.clone(), (n, k), &dev).unwrap();
        let mut layouts = vec![Linear::from_dense(Dense::OutIn(wt.clone())), Linear::from_dense(Dense::InOut(wt.t().unwrap().contiguous().unwrap()))];
        if enabled() {
            layouts.push(Linear::from_dense(Dense::Packed(PackedMatrix::from_tensor(&wt).unwrap())));
        }
        // The packed weight is f16; candle's layouts keep f32.
        let with_f16 = reference(&x, &w, m, n, k);
        let w16: Vec<f32> = w.iter().map(|&v| half::f16::from_f32(v).to_f32()).collect();
        let mut with_f32 = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                with_f32[i * n + j] = (0..k).map(|t| x[i * k + t] as f64 * w[j * k + t] as f64).sum();
            }
        }
        assert!(w16 != w, "the test weights must not be exact in f16");
        for l in &layouts {
            let y = l.forward(&xt).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
            let want = if l.is_packed() { &with_f16 } else { &with_f32 };
            for (i, (a, b)) in y.iter().zip(want).enumerate() {
                assert!((*a as f64 - b).abs() <= 1e-5 * (1.0 + b.abs()), "packed {} at {i}: {a} vs {b}", l.is_packed());
            }
        }
        // n >= 2048 is wide: kept as loaded.
        assert!(matches!(Linear::new(wt).unwrap().dense, Dense::Packed(_) | Dense::OutIn(_)));
    }
}
