//! The one place a compute device is chosen.
//!
//! CPU by default. Built with the `cuda` cargo feature, the first CUDA device is used when it can
//! be opened, with a message and the CPU otherwise. Everything else in `models/` takes the device
//! from here (or from a tensor) and stays device-agnostic.

use candle_core::Device;

/// The device models run on.
pub fn choose() -> Device {
    #[cfg(feature = "cuda")]
    {
        match Device::new_cuda(0) {
            Ok(d) => return d,
            Err(e) => eprintln!("tstlab: CUDA device 0 is not usable ({e}); running on the CPU"),
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
