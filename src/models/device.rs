//! The one place a compute device is chosen.
//!
//! CPU by default. Built with the `cuda` cargo feature, the first CUDA device is used when it can
//! be opened; otherwise one line says why (once per process) and the CPU is used. Everything else
//! in `models/` takes the device from here (or from a tensor) and stays device-agnostic, and
//! reports name the device a model really runs on through [`describe`].

use candle_core::Device;

/// The device models run on.
pub fn choose() -> Device {
    #[cfg(feature = "cuda")]
    {
        match Device::new_cuda(0) {
            Ok(d) => return d,
            Err(e) => {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| eprintln!("tstlab: CUDA device 0 is not usable ({}); running on the CPU", message(&e)));
            }
        }
    }
    Device::Cpu
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
        // A tensor made on it reports the same device.
        let t = candle_core::Tensor::zeros(2, candle_core::DType::F32, &d).unwrap();
        assert_eq!(describe(t.device()), label);
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
}
