//! `cargo bench --bench kernels`: the CPU kernels of `src/models/kernels/` against candle's
//! ops on the same inputs in the same run, on the shapes of SmolLM2-135M (hidden 576, 9 heads
//! of 64 on 3 key/value heads, MLP 1536, vocabulary 49152) and of a BERT-base encoder (768,
//! 12 heads, 3072). Prints milliseconds per call (median of interleaved samples) and candle's
//! time over the kernel's (above 1: the kernel is faster). Speed is measured here, never
//! asserted. `cargo bench --bench kernels -- FILTER` runs the rows whose name holds FILTER.
//! The quantized few-row matmul is timed against the packed f16 one instead (`quant` rows).

use candle_core::{D, Device, Tensor};
use std::sync::Arc;
use std::time::{Duration, Instant};
use candle_core::quantized::{GgmlDType, QTensor};
use tstlab::models::kernels::{self, activation, attention, layout, matmul, norm, quant};

/// Samples per side; each sample repeats the call for about [`SAMPLE`].
const SAMPLES: usize = 7;
const SAMPLE: Duration = Duration::from_millis(40);

/// Median seconds per call of `a` and of `b`, their samples interleaved (the machine's load
/// then weighs on both alike).
fn time_pair(mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let reps = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        let once = t.elapsed().max(Duration::from_micros(1));
        (SAMPLE.as_secs_f64() / once.as_secs_f64()).ceil().clamp(1.0, 10_000.0) as usize
    };
    let (ra, rb) = (reps(&mut a), reps(&mut b));
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..SAMPLES {
        for (f, r, out) in [(&mut a as &mut dyn FnMut(), ra, &mut ta), (&mut b as &mut dyn FnMut(), rb, &mut tb)] {
            let t = Instant::now();
            for _ in 0..r {
                f();
            }
            out.push(t.elapsed().as_secs_f64() / r as f64);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut ta), median(&mut tb))
}

struct Bench {
    filter: Option<String>,
}

impl Bench {
    fn row(&self, name: &str, shape: &str, peer: &str, kernel: impl FnMut(), candle: impl FnMut()) {
        if self.filter.as_deref().is_some_and(|f| !name.contains(f)) {
            return;
        }
        let (k, c) = time_pair(kernel, candle);
        println!("{name:<16} {shape:<26} {:>10.3} {:>10.3} {:>7.2}x  {peer}", k * 1e3, c * 1e3, c / k);
    }
}

fn tensor(len: usize, seed: u64, shape: &[usize]) -> Tensor {
    Tensor::from_vec(kernels::test_values(len, seed), shape, &Device::Cpu).unwrap()
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument filters rows.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let b = Bench { filter };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let panels = matmul::PanelKernel::best();
    println!(
        "tstlab CPU kernels vs candle's ops (AVX-512F: {}, AVX2+FMA: {}, packed matmul: {}, {threads} threads; TSTLAB_SIMD caps them)",
        kernels::avx512(),
        kernels::avx2_fma(),
        panels.map_or("none", |k| k.label())
    );
    if panels.is_none() {
        println!("no packed matmul on this CPU (candle's gemm runs instead): its rows are left out");
    }
    println!("{:<16} {:<26} {:>10} {:>10} {:>8}  candle peer", "kernel", "shape", "tstlab ms", "candle ms", "ratio");

    if panels.is_some() {
        // Few-row linear layers: the quantized blocks (Q4_1, the head Q8_0 as SmolLM2's GGUF has
        // them) against the packed f16 panels; where the ratio falls below 1 is the threshold
        // `kernels::quant::MAX_ROWS`.
        println!("{:<16} {:<26} {:>10} {:>10} {:>8}  peer", "kernel", "shape", "quant ms", "f16 ms", "ratio");
        for (what, n, k, ty) in [("qkv", 960, 576, GgmlDType::Q4_1), ("gate_up", 3072, 576, GgmlDType::Q4_1), ("down", 576, 1536, GgmlDType::Q4_1), ("lm_head", 49152, 576, GgmlDType::Q8_0)] {
            let w = tensor(n * k, 1, &[n, k]);
            let packed = matmul::PackedMatrix::from_tensor(&w).unwrap();
            let blocks = QTensor::quantize(&w, ty).unwrap();
            let qt = quant::QuantType::from_ggml(ty).unwrap();
            let q = quant::QuantMatrix::from_blocks(qt, n, k, &blocks.data().unwrap()).unwrap();
            for m in [1, 2, 4, 6, 8] {
                let xv = kernels::test_values(m * k, 2);
                b.row(&format!("quant {what}"), &format!("[{m},{k}]x[{k},{n}] {qt:?}"), "packed f16", || drop(q.matmul(&xv, m)), || drop(packed.matmul(&xv, m)));
            }
        }
        println!("{:<16} {:<26} {:>10} {:>10} {:>8}  candle peer", "kernel", "shape", "tstlab ms", "candle ms", "ratio");
        // Linear layers: the packed f16 matmul vs candle's gemm in the better of its two layouts.
        for (what, n, k) in [("qkv", 960, 576), ("gate_up", 3072, 576), ("down", 576, 1536), ("lm_head", 49152, 576)] {
            let w = tensor(n * k, 1, &[n, k]);
            let packed = matmul::PackedMatrix::from_tensor(&w).unwrap();
            let w_in_out = w.t().unwrap().contiguous().unwrap();
            for m in [1, 50, 256] {
                if what == "lm_head" && m > 50 {
                    continue;
                }
                let xv = kernels::test_values(m * k, 2);
                let x = Tensor::from_slice(&xv, (m, k), &Device::Cpu).unwrap();
                let (t_out_in, t_in_out) = time_pair(|| drop(x.matmul(&w.t().unwrap()).unwrap()), || drop(x.matmul(&w_in_out).unwrap()));
                let (peer, best) = if t_out_in <= t_in_out { ("x·wᵀ, w [out,in]", &w) } else { ("x·w, w [in,out]", &w_in_out) };
                let transposed = t_out_in <= t_in_out;
                b.row(
                    &format!("matmul {what}"),
                    &format!("[{m},{k}]x[{k},{n}]"),
                    peer,
                    || drop(packed.matmul(&xv, m)),
                    || drop(if transposed { x.matmul(&best.t().unwrap()) } else { x.matmul(best) }.unwrap()),
                );
            }
        }
    }

    // Batch-1 decode: the quantized matmul at one row against candle's quantized matmul (its
    // own kernels, 8-bit inputs) on the same blocks, for SmolLM2's Q4_1 GGUF and the types
    // llama.cpp's Q4_K_M gives it (Q5_0; Q4_K or Q6_K for down) and Q5_K; one query's attention
    // against the general
    // step's kernel; a team run of 150 phases (the fused step's) against 150 rayon
    // parallel calls (the general step's hand-offs), with next to no work in either.
    for (what, n, k, ty) in [
        ("qkv", 960, 576, GgmlDType::Q4_1),
        ("gate_up", 3072, 576, GgmlDType::Q4_1),
        ("gate_up", 3072, 576, GgmlDType::Q5_0),
        ("down", 576, 1536, GgmlDType::Q4_1),
        ("down", 576, 1536, GgmlDType::Q4K),
        ("down", 576, 1536, GgmlDType::Q5K),
        ("down", 576, 1536, GgmlDType::Q6K),
        ("lm_head", 49152, 576, GgmlDType::Q8_0),
    ] {
        let w = tensor(n * k, 1, &[n, k]);
        let blocks = QTensor::quantize(&w, ty).unwrap();
        let qt = quant::QuantType::from_ggml(ty).unwrap();
        let q = quant::QuantMatrix::from_blocks(qt, n, k, &blocks.data().unwrap()).unwrap();
        let qmm = candle_core::quantized::QMatMul::from_qtensor(blocks).unwrap();
        let xv = kernels::test_values(k, 2);
        let x = Tensor::from_slice(&xv, (1, k), &Device::Cpu).unwrap();
        b.row(&format!("quant1 {what}"), &format!("[1,{k}]x[{k},{n}] {}", qt.label()), "QMatMul (candle)", || drop(q.matmul(&xv, 1)), || {
            drop(candle_core::Module::forward(&qmm, &x).unwrap())
        });
    }
    {
        let (kv, group, hd, t_end) = (3, 3, 64, 100);
        let (cap, len) = (128, t_end - 1);
        let q = kernels::test_values(kv * group * hd, 3);
        let k = kernels::test_values(kv * cap * hd, 4);
        let v = kernels::test_values(kv * cap * hd, 5);
        let valid = vec![true; len];
        let mut scores = Vec::new();
        let mut out = vec![0f32; kv * group * hd];
        let qt = Tensor::from_slice(&q, (1, kv, group, hd), &Device::Cpu).unwrap();
        let (kt, vt) = (Tensor::from_slice(&k, (1, kv, cap, hd), &Device::Cpu).unwrap(), Tensor::from_slice(&v, (1, kv, cap, hd), &Device::Cpu).unwrap());
        let mask = attention::Mask::new(vec![0f32; group * t_end], 1, group, t_end, &Device::Cpu).unwrap();
        let scale = 1.0 / (hd as f64).sqrt();
        b.row(
            "attention one",
            &format!("1x{kv}x{group}x{hd} over {t_end}"),
            "padded (general step)",
            || {
                for j in 0..kv {
                    let (keys, vals) = (&k[j * cap * hd..], &v[j * cap * hd..]);
                    let (k_new, v_new) = (&keys[len * hd..t_end * hd], &vals[len * hd..t_end * hd]);
                    for h in j * group..(j + 1) * group {
                        let o = &mut out[h * hd..(h + 1) * hd];
                        attention::one_query(&q[h * hd..(h + 1) * hd], keys, vals, &valid, k_new, v_new, scale as f32, &mut scores, o);
                    }
                }
            },
            || drop(attention::padded(&qt, &kt, &vt, t_end, &mask, scale).unwrap()),
        );
    }
    {
        use rayon::prelude::*;
        let team = kernels::team::Team::new(rayon::current_num_threads()).unwrap();
        let phases = 150;
        let mut data = vec![0f32; 1024];
        b.row(
            "team phases",
            &format!("{phases} phases, {} threads", team.threads()),
            "rayon par_chunks_mut",
            || {
                team.run(|m| {
                    for _ in 0..phases {
                        m.split(16, |u, _| {
                            std::hint::black_box(u);
                        });
                    }
                })
            },
            || (0..phases).for_each(|_| data.par_chunks_mut(64).for_each(|c| c[0] += 1.0)),
        );
    }

    // Llama attention over the KV cache: decoding (3 queries per kv head) and a prefill.
    for (what, rows, width, t_end) in [("decode", 50, 1, 60), ("prefill", 8, 30, 30)] {
        let (kv, group, hd, cap) = (3, 3, 64, 128);
        let gw = group * width;
        let q = tensor(rows * kv * gw * hd, 3, &[rows, kv, gw, hd]);
        let k = tensor(rows * kv * cap * hd, 4, &[rows, kv, cap, hd]);
        let v = tensor(rows * kv * cap * hd, 5, &[rows, kv, cap, hd]);
        let mut mask = vec![0f32; rows * gw * t_end];
        for (i, m) in mask.iter_mut().enumerate() {
            let (query, t) = ((i / t_end) % gw, i % t_end);
            if t > t_end - width + query % width {
                *m = f32::NEG_INFINITY;
            }
        }
        let host = attention::Mask::new(mask.clone(), rows, gw, t_end, &Device::Cpu).unwrap();
        let dev_mask = Tensor::from_vec(mask, (rows, 1, gw, t_end), &Device::Cpu).unwrap();
        let scale = 1.0 / (hd as f64).sqrt();
        b.row(
            &format!("attention {what}"),
            &format!("{rows}x{kv}x{gw}x{hd} over {t_end}"),
            "matmul, softmax_last_dim, matmul",
            || drop(attention::padded(&q, &k, &v, t_end, &host, scale).unwrap()),
            || {
                let kk = k.narrow(2, 0, t_end).unwrap();
                let vv = v.narrow(2, 0, t_end).unwrap();
                let att = (q.matmul(&kk.t().unwrap()).unwrap() * scale).unwrap().broadcast_add(&dev_mask).unwrap();
                drop(candle_nn::ops::softmax_last_dim(&att).unwrap().matmul(&vv).unwrap())
            },
        );
    }

    // The packed tokens of a prefill into the padded layout (9 query heads).
    {
        let (rows, w, kv, group, hd) = (8, 30, 3, 3, 64);
        let counts: Vec<usize> = (0..rows).map(|r| w - (r * 7) % w).collect();
        let slots: Vec<u32> = (0..rows).flat_map(|r| (w - counts[r]..w).map(move |j| (r * w + j) as u32)).collect();
        let n = slots.len();
        let mut to_padded = vec![0u32; rows * w];
        for (t, &s) in slots.iter().enumerate() {
            to_padded[s as usize] = t as u32;
        }
        let to_padded = Tensor::new(to_padded.as_slice(), &Device::Cpu).unwrap();
        let pad = layout::PadLayout::new(Arc::new(slots), w, kv, group, hd);
        let x = tensor(n * kv * group * hd, 6, &[n, kv * group * hd]);
        b.row(
            "layout to_padded",
            &format!("{n} tokens, {rows}x{w} slots"),
            "index_select, permute, contiguous",
            || drop(layout::to_padded(&x, &pad, rows, 0).unwrap()),
            || {
                let y = x.index_select(&to_padded, 0).unwrap().reshape((rows, w, kv, group, hd)).unwrap();
                drop(y.permute((0, 2, 3, 1, 4)).unwrap().contiguous().unwrap())
            },
        );
    }

    {
        for m in [1, 50, 400] {
            let gu = tensor(m * 2 * 1536, 7, &[m, 2 * 1536]);
            b.row(
                "silu_mul",
                &format!("[{m},{}]", 2 * 1536),
                "silu(gate) * up",
                || drop(activation::silu_mul(&gu, 1536).unwrap()),
                || drop((candle_nn::ops::silu(&gu.narrow(1, 0, 1536).unwrap()).unwrap() * gu.narrow(1, 1536, 1536).unwrap()).unwrap()),
            );
        }
        let xs: Vec<f32> = kernels::test_values(1 << 16, 8).iter().map(|x| x * 20.0).collect();
        let xt = Tensor::from_slice(&xs, xs.len(), &Device::Cpu).unwrap();
        let mut buf = xs.clone();
        b.row(
            "exp",
            &format!("{} values", xs.len()),
            "Tensor::exp",
            || {
                buf.copy_from_slice(&xs);
                activation::exp_in_place(&mut buf)
            },
            || drop(xt.exp().unwrap()),
        );
    }

    // BERT-base encoder kernels on a batch of 64 sequences of 32 tokens.
    {
        let (bs, l, h, inter, heads) = (64, 32, 768, 3072, 12);
        let n = bs * l;
        let mm = tensor(n * inter, 9, &[n, inter]);
        let bias = tensor(inter, 10, &[inter]);
        b.row(
            "bias_gelu",
            &format!("[{n},{inter}]"),
            "broadcast_add, gelu_erf",
            || drop(activation::bias_gelu(&mm, &bias).unwrap()),
            || drop(mm.broadcast_add(&bias).unwrap().gelu_erf().unwrap()),
        );
        let (x, res) = (tensor(n * h, 11, &[n, h]), tensor(n * h, 12, &[n, h]));
        let (db, gamma, beta) = (tensor(h, 13, &[h]), tensor(h, 14, &[h]), tensor(h, 15, &[h]));
        let op = norm::AddNorm::new(&db, &gamma, &beta, 1e-12).unwrap();
        b.row(
            "add_norm",
            &format!("[{n},{h}]"),
            "broadcast_add, add, layer_norm",
            || drop(op.forward(&x, &res).unwrap()),
            || drop(candle_nn::ops::layer_norm(&(x.broadcast_add(&db).unwrap() + &res).unwrap(), &gamma, &beta, 1e-12).unwrap()),
        );
        let lengths: Vec<usize> = (0..bs).map(|i| l - (i * 5) % (l / 2)).collect();
        let qkv = tensor(n * 3 * h, 16, &[n, 3 * h]);
        let qkv_bias_v = kernels::test_values(3 * h, 17);
        let qkv_bias = Tensor::from_slice(&qkv_bias_v, 3 * h, &Device::Cpu).unwrap();
        let additive: Vec<f32> = lengths.iter().flat_map(|&n| (0..l).map(move |t| if t < n { 0.0 } else { f32::MIN })).collect();
        let additive = Tensor::from_vec(additive, (bs, 1, 1, l), &Device::Cpu).unwrap();
        let hd = h / heads;
        b.row(
            "encoder attention",
            &format!("{bs}x{l} tokens, {heads} heads"),
            "bias, matmul, softmax, matmul",
            || drop(attention::encoder(&qkv, &qkv_bias_v, heads, &lengths, l).unwrap()),
            || {
                let qkv = qkv.broadcast_add(&qkv_bias).unwrap();
                let split = |i: usize| qkv.narrow(1, i * h, h).unwrap().reshape((bs, l, heads, hd)).unwrap().transpose(1, 2).unwrap().contiguous().unwrap();
                let q = (split(0) * (1.0 / (hd as f64).sqrt())).unwrap();
                let s = q.matmul(&split(1).t().unwrap()).unwrap().broadcast_add(&additive).unwrap();
                let p = candle_nn::ops::softmax(&s, D::Minus1).unwrap();
                drop(p.matmul(&split(2)).unwrap().transpose(1, 2).unwrap().contiguous().unwrap().reshape((n, h)).unwrap())
            },
        );
    }
}
