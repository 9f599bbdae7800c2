//! The one place a compute device is chosen.
//!
//! CPU by default. Built with the `cuda` cargo feature, the first CUDA device is used when it can
//! be opened; otherwise one line says why and the CPU is used. The choice is made once per
//! process and every model shares it (one CUDA context, stream and cuBLAS handle). Everything
//! else in `models/` takes the device from here (or from a tensor) and stays device-agnostic,
//! and reports name the device a model really runs on through [`describe`].
//!
//! On a CUDA device the kernel modules models use are loaded when the device is opened
//! (`prepare`): candle ships them as PTX, which the driver compiles for the GPU at load time,
//! once per machine (its cache, `~/.nv/ComputeCache`, serves later runs). When that takes
//! longer than a second a line says so. docs/GPU.md.

use candle_core::Device;
use std::sync::{OnceLock, RwLock};

/// Where device lines go: stderr unless a front end routes them ([`set_notes`]).
static NOTES: RwLock<Option<fn(&str)>> = RwLock::new(None);

/// Routes the device lines (the CPU fallback, the kernel preparation) to `sink` instead of stderr
/// (the TUI holds them while it owns the terminal).
pub fn set_notes(sink: fn(&str)) {
    *NOTES.write().unwrap_or_else(|e| e.into_inner()) = Some(sink);
}

#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn note(text: &str) {
    match *NOTES.read().unwrap_or_else(|e| e.into_inner()) {
        Some(sink) => sink(text),
        None => eprintln!("{text}"),
    }
}

/// The device models run on: chosen on the first call, the same one after.
pub fn choose() -> Device {
    static CHOSEN: OnceLock<Device> = OnceLock::new();
    CHOSEN.get_or_init(open).clone()
}

fn open() -> Device {
    #[cfg(feature = "cuda")]
    match Device::new_cuda(0).and_then(|d| prepare(&d).map(|()| d)) {
        Ok(d) => return d,
        Err(e) => note(&fallback(&message(&e))),
    }
    Device::Cpu
}

/// The one line said when the CUDA device cannot be used.
pub fn fallback(reason: &str) -> String {
    format!("tstlab: CUDA device 0 is not usable ({reason}); running on the CPU")
}

/// A short name for reports ("cpu", "cuda:0").
pub fn describe(device: &Device) -> String {
    match device.location() {
        candle_core::DeviceLocation::Cpu => "cpu".to_owned(),
        candle_core::DeviceLocation::Cuda { gpu_id } => format!("cuda:{gpu_id}"),
        candle_core::DeviceLocation::Metal { gpu_id } => format!("metal:{gpu_id}"),
    }
}

/// A candle error as one line: the message without the backtrace candle attaches (with
/// `RUST_BACKTRACE` set, its Display appends every frame).
pub fn message(e: &candle_core::Error) -> String {
    use candle_core::Error;
    let text = match e {
        Error::WithBacktrace { inner, .. } => return message(inner),
        Error::Context { inner, context } => format!("{context}: {}", message(inner)),
        Error::WithPath { inner, path } => format!("{}: {}", path.display(), message(inner)),
        other => other.to_string(),
    };
    text.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

/// The line shown while the GPU kernels load for longer than [`SLOW`].
pub const PREPARING: &str = "tstlab: preparing the GPU kernels: the driver compiles candle's PTX for this GPU \
on a machine's first run (later runs reuse its cache, ~/.nv/ComputeCache)";

/// How long kernel loading may take before [`PREPARING`] is shown.
pub const SLOW: std::time::Duration = std::time::Duration::from_secs(1);

/// candle's kernel modules the models use on a CUDA device, each with one of its functions:
/// all but convolution, sorting and quantized matmul (GGUF weights are dequantized to f32 on
/// the GPU, `llama.rs`).
#[cfg(feature = "cuda")]
const MODULES: [(&str, candle_core::cuda_backend::kernels::Module); 8] = {
    use candle_core::cuda_backend::kernels::*;
    [
        ("affine_f32", AFFINE),
        ("badd_f32", BINARY),
        ("cast_f32_f16", CAST),
        ("fill_f32", FILL),
        ("is_u32_f32", INDEXING),
        ("rmsnorm_f32", REDUCE),
        ("where_u8_f32", TERNARY),
        ("ucopy_f32", UNARY),
    ]
};

/// Loads the kernel modules of [`MODULES`] on `dev` now rather than at a model's first step, so
/// the JIT compilation of a machine's first run happens while the model loads and is named:
/// [`PREPARING`] when it takes longer than [`SLOW`], then the seconds it took.
#[cfg(feature = "cuda")]
pub fn prepare(dev: &Device) -> candle_core::Result<()> {
    let Device::Cuda(cuda) = dev else { return Ok(()) };
    let t0 = std::time::Instant::now();
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(move || {
            let r = MODULES.iter().try_for_each(|(f, m)| cuda.get_or_load_func(f, m).map(drop));
            let _ = done.send(r);
        });
        let r = match wait.recv_timeout(SLOW) {
            Ok(r) => return r,
            Err(_) => {
                note(PREPARING);
                wait.recv().unwrap_or_else(|_| Err(candle_core::Error::Msg("kernel loading stopped".into())))
            }
        };
        note(&format!("tstlab: GPU kernels ready after {:.1} s", t0.elapsed().as_secs_f64()));
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_described_as_cpu() {
        assert_eq!(describe(&Device::Cpu), "cpu");
    }

    #[test]
    fn chosen_device_is_the_one_described() {
        let d = choose();
        let label = describe(&d);
        if cfg!(feature = "cuda") {
            assert!(label == "cpu" || label.starts_with("cuda:"), "{label}");
        } else {
            assert_eq!(label, "cpu");
        }
        // A tensor made on it reports the same device, and the choice holds.
        let t = candle_core::Tensor::zeros(2, candle_core::DType::F32, &d).unwrap();
        assert_eq!(describe(t.device()), label);
        assert!(choose().same_device(&d));
    }

    #[test]
    fn errors_lose_their_backtrace() {
        let inner = candle_core::Error::Msg("DriverError(CUDA_ERROR_NO_DEVICE, \"no CUDA-capable device is detected\")".into());
        let e = candle_core::Error::WithBacktrace { inner: Box::new(inner), backtrace: Box::new(std::backtrace::Backtrace::force_capture()) };
        assert!(e.to_string().lines().count() > 1, "the Display carries frames");
        assert_eq!(message(&e), "DriverError(CUDA_ERROR_NO_DEVICE, \"no CUDA-capable device is detected\")");
        let e = e.context("opening the device");
        assert_eq!(message(&e), "opening the device: DriverError(CUDA_ERROR_NO_DEVICE, \"no CUDA-capable device is detected\")");
    }

    #[test]
    fn fallback_is_one_line_naming_the_reason() {
        let line = fallback("DriverError(CUDA_ERROR_NO_DEVICE, \"no CUDA-capable device is detected\")");
        assert_eq!(
            line,
            "tstlab: CUDA device 0 is not usable (DriverError(CUDA_ERROR_NO_DEVICE, \"no CUDA-capable device is detected\")); running on the CPU"
        );
        assert!(!PREPARING.contains('\n'));
    }

    /// Every warmed function is in its module's PTX (checked without a GPU).
    #[cfg(feature = "cuda")]
    #[test]
    fn warmed_functions_exist() {
        for (f, m) in MODULES {
            assert!(m.ptx().contains(&format!(".entry {f}(")), "{f} not in its module");
        }
    }
}
