//! Safe Rust API over libhkb: candle's GPU kernels, compiled ahead of time, looked up by name and
//! launched the way candle's CUDA backend launches them through cudarc.
//!
//! ```no_run
//! # fn main() -> hkb::Result<()> {
//! use hkb::{Device, DevicePtr, LaunchArgs, LaunchConfig};
//!
//! let dev = Device::new(0)?;
//! let inp = dev.htod_copy(&[1.0f32, 2.0, 3.0, 4.0])?;
//! let out = dev.alloc::<f32>(inp.len())?;
//! let func = dev.get_func("affine_f32")?;
//! let numel = inp.len();
//! let mut args = LaunchArgs::new();
//! // affine_f32(numel, num_dims, info, inp, out, mul, add); a null info means contiguous.
//! args.arg(&numel).arg(&1usize).arg(&DevicePtr::NULL).arg(&inp).arg(&out);
//! args.arg(&0.5f32).arg(&1.0f32);
//! // SAFETY: the kernel reads and writes `numel` floats of buffers that hold that many.
//! unsafe { func.launch(LaunchConfig::for_num_elems(numel as u32), &args) }?;
//! assert_eq!(out.dtoh()?, [1.5, 2.0, 2.5, 3.0]);
//! # Ok(())
//! # }
//! ```
//!
//! Every fallible call returns [`Error`]: the library's `hkb_status` and its message.
#![deny(missing_docs)]

mod device;
mod dtype;
mod error;
mod launch;
mod memory;

pub use device::{init, platform, shutdown, version, Device, Function, Stream, Version};
pub use dtype::{Bf16, DeviceCopy, DevicePtr, DeviceRepr, F16, F8E4M3};
pub use error::{Error, Result};
pub use hkb_sys as sys;
pub use launch::{KernelArg, LaunchArgs, LaunchBuilder, LaunchConfig};
pub use memory::{DeviceBuffer, DeviceView};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaded_library_has_this_abi() {
        assert_eq!(version().abi, sys::HKB_ABI_VERSION);
        let p = platform();
        assert!(p == "amd" || p == "nvidia", "platform {p:?}");
    }

    #[test]
    fn out_of_range_device_is_no_device_with_the_library_message() {
        // Without a GPU every ordinal is out of range; with one, `count` is.
        let count = match Device::count() {
            Ok(n) => n,
            Err(e) => {
                println!("device count failed ({e}); checking ordinal 0");
                0
            }
        };
        let err = Device::new(count).unwrap_err();
        assert_eq!(err.status(), sys::HKB_ERROR_NO_DEVICE, "{err}");
        assert_eq!(err.status_name(), "HKB_ERROR_NO_DEVICE");
        assert!(!err.message().is_empty(), "the library gave no message");
        assert!(!err.status_string().is_empty());
        let shown = err.to_string();
        assert!(shown.starts_with("HKB_ERROR_NO_DEVICE (2): "), "{shown}");
        assert!(shown.ends_with(err.message()));
    }

    #[test]
    fn multiprocessor_count_is_set_and_restored_where_a_device_exists() {
        if !matches!(Device::count(), Ok(n) if n > 0) {
            println!("no device: the multiprocessor count is not checked");
            return;
        }
        let d = Device::new(0).unwrap();
        let own = d.multiprocessors().unwrap();
        assert!(own > 0);
        d.set_multiprocessors(3).unwrap();
        assert_eq!(d.multiprocessors().unwrap(), 3);
        let err = d.set_multiprocessors(65537).unwrap_err();
        assert_eq!(err.status(), sys::HKB_ERROR_INVALID_ARGUMENT, "{err}");
        d.set_multiprocessors(0).unwrap();
        assert_eq!(d.multiprocessors().unwrap(), own);
    }

    #[test]
    fn ordinal_beyond_c_int_is_no_device() {
        let err = Device::new(usize::MAX).unwrap_err();
        assert_eq!(err.status(), sys::HKB_ERROR_NO_DEVICE);
        assert!(err.message().contains(&usize::MAX.to_string()), "{err}");
    }

    #[test]
    fn error_keeps_status_and_message() {
        let e = Error::new(
            sys::HKB_ERROR_UNKNOWN_KERNEL,
            "no kernel affine_f33; nearest: affine_f32",
        );
        assert_eq!(e.status(), 3);
        assert_eq!(e.status_name(), "HKB_ERROR_UNKNOWN_KERNEL");
        assert_eq!(e.message(), "no kernel affine_f33; nearest: affine_f32");
        assert_eq!(
            format!("{e}"),
            "HKB_ERROR_UNKNOWN_KERNEL (3): no kernel affine_f33; nearest: affine_f32"
        );
        let unknown = Error::new(99, "from a newer library");
        assert_eq!(unknown.status_name(), "HKB_ERROR_UNRECOGNISED");
        assert_eq!(Error::new(-1, "").status_name(), "HKB_ERROR_UNRECOGNISED");
    }

    #[test]
    fn status_names_follow_the_constants() {
        let consts = [
            sys::HKB_SUCCESS,
            sys::HKB_ERROR_INVALID_ARGUMENT,
            sys::HKB_ERROR_NO_DEVICE,
            sys::HKB_ERROR_UNKNOWN_KERNEL,
            sys::HKB_ERROR_ARGUMENT_MISMATCH,
            sys::HKB_ERROR_TARGET_MISSING,
            sys::HKB_ERROR_CORRUPT_BUNDLE,
            sys::HKB_ERROR_CORRUPT_MANIFEST,
            sys::HKB_ERROR_MODULE_LOAD,
            sys::HKB_ERROR_RUNTIME,
            sys::HKB_ERROR_LAUNCH,
            sys::HKB_ERROR_OUT_OF_MEMORY,
            sys::HKB_ERROR_SHUT_DOWN,
            sys::HKB_ERROR_IO,
        ];
        for (i, c) in consts.iter().enumerate() {
            assert_eq!(*c, i as i32);
            assert_eq!(Error::new(*c, "").status_name(), sys::HKB_STATUS_NAMES[i]);
        }
    }

    #[test]
    fn handles_are_send_and_sync() {
        fn both<T: Send + Sync>() {}
        both::<Device>();
        both::<Function>();
        both::<Stream>();
        both::<DeviceBuffer<f32>>();
        both::<Error>();
    }
}
