//! Raw FFI bindings to libhkb's C ABI, written by hand from `include/hkb/hkb.h`.
//!
//! Every item mirrors the header one to one; see the header for each function's contract. The
//! safe API lives in the `hkb` crate.
//!
//! `hkb_status` is a C enum. It is bound as `c_int` plus constants rather than a Rust enum because
//! a newer library may return a value this crate does not know, and a Rust enum holding an
//! undeclared discriminant is undefined behaviour.
#![no_std]
#![deny(missing_docs)]
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, c_void};
use core::marker::{PhantomData, PhantomPinned};

/// Major version of the header these bindings mirror.
pub const HKB_VERSION_MAJOR: c_int = 0;
/// Minor version of the header these bindings mirror.
pub const HKB_VERSION_MINOR: c_int = 2;
/// Patch version of the header these bindings mirror.
pub const HKB_VERSION_PATCH: c_int = 0;
/// The ABI these bindings were written against; compare with what `hkb_version` reports.
pub const HKB_ABI_VERSION: c_int = 1;

/// Result of every fallible call (`HKB_SUCCESS` or an `HKB_ERROR_*` value).
pub type hkb_status = c_int;
/// The call did what was asked.
pub const HKB_SUCCESS: hkb_status = 0;
/// Null pointer, bad handle or bad launch geometry.
pub const HKB_ERROR_INVALID_ARGUMENT: hkb_status = 1;
/// No GPU, or the ordinal is out of range.
pub const HKB_ERROR_NO_DEVICE: hkb_status = 2;
/// The name is not in the manifest (the message lists near names).
pub const HKB_ERROR_UNKNOWN_KERNEL: hkb_status = 3;
/// Wrong argument count or size for the kernel's signature.
pub const HKB_ERROR_ARGUMENT_MISMATCH: hkb_status = 4;
/// The code object has no entry for the device's target.
pub const HKB_ERROR_TARGET_MISSING: hkb_status = 5;
/// A code object is truncated or malformed.
pub const HKB_ERROR_CORRUPT_BUNDLE: hkb_status = 6;
/// The manifest is malformed.
pub const HKB_ERROR_CORRUPT_MANIFEST: hkb_status = 7;
/// The runtime refused to load a module (the message has its log).
pub const HKB_ERROR_MODULE_LOAD: hkb_status = 8;
/// A HIP or CUDA call failed.
pub const HKB_ERROR_RUNTIME: hkb_status = 9;
/// A launch failed, or failed at `HKB_DEBUG_SYNC`'s check.
pub const HKB_ERROR_LAUNCH: hkb_status = 10;
/// Host or device memory ran out.
pub const HKB_ERROR_OUT_OF_MEMORY: hkb_status = 11;
/// The library or the handle's context was shut down.
pub const HKB_ERROR_SHUT_DOWN: hkb_status = 12;
/// A file in `HKB_BUNDLE_DIR` is missing, unreadable or not a regular file.
pub const HKB_ERROR_IO: hkb_status = 13;

/// The C names of the status constants, indexed by value.
pub const HKB_STATUS_NAMES: [&str; 14] = [
    "HKB_SUCCESS",
    "HKB_ERROR_INVALID_ARGUMENT",
    "HKB_ERROR_NO_DEVICE",
    "HKB_ERROR_UNKNOWN_KERNEL",
    "HKB_ERROR_ARGUMENT_MISMATCH",
    "HKB_ERROR_TARGET_MISSING",
    "HKB_ERROR_CORRUPT_BUNDLE",
    "HKB_ERROR_CORRUPT_MANIFEST",
    "HKB_ERROR_MODULE_LOAD",
    "HKB_ERROR_RUNTIME",
    "HKB_ERROR_LAUNCH",
    "HKB_ERROR_OUT_OF_MEMORY",
    "HKB_ERROR_SHUT_DOWN",
    "HKB_ERROR_IO",
];

// Opaque handle targets: zero-sized, not constructible outside this crate, and neither Send, Sync
// nor Unpin, so a raw pointer to one promises nothing the C library does not.
/// Opaque target of [`hkb_context`].
#[repr(C)]
pub struct hkb_context_s {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
/// Opaque target of [`hkb_function`].
#[repr(C)]
pub struct hkb_function_s {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
/// Opaque target of [`hkb_stream`].
#[repr(C)]
pub struct hkb_stream_s {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// One per device, owned by the library.
pub type hkb_context = *mut hkb_context_s;
/// A kernel on one device, owned by its context.
pub type hkb_function = *mut hkb_function_s;
/// Null means the device's default stream.
pub type hkb_stream = *mut hkb_stream_s;
/// A device address, as cudarc's `CUdeviceptr`.
pub type hkb_devptr = u64;

/// Launch geometry, as cudarc's `LaunchConfig`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct hkb_launch_config {
    /// Blocks in x, y, z; any zero launches nothing.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z; 1 to 1024 in total.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

extern "C" {
    /// Version and ABI version of the library actually loaded.
    pub fn hkb_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int, abi: *mut c_int);
    /// `"amd"` or `"nvidia"`: the flavour the library was built as.
    pub fn hkb_platform() -> *const c_char;
    /// The status constant's C name; `HKB_ERROR_UNKNOWN_STATUS` for other values.
    pub fn hkb_status_string(status: hkb_status) -> *const c_char;
    /// Message of the calling thread's last failing call (`""` if none).
    pub fn hkb_last_error() -> *const c_char;

    /// Optional explicit start-up; every call initialises on first use.
    pub fn hkb_init() -> hkb_status;
    /// Synchronises every device, unloads every module and invalidates every handle.
    pub fn hkb_shutdown() -> hkb_status;

    /// Number of GPUs the runtime sees (0 without one).
    pub fn hkb_device_count(count: *mut c_int) -> hkb_status;
    /// The library-owned context of device `ordinal`.
    pub fn hkb_context_get(ordinal: c_int, ctx: *mut hkb_context) -> hkb_status;
    /// The device ordinal of a context.
    pub fn hkb_context_ordinal(ctx: hkb_context, ordinal: *mut c_int) -> hkb_status;
    /// The device's full target ID, NUL-terminated, in at most `len` bytes.
    pub fn hkb_context_target(ctx: hkb_context, buf: *mut c_char, len: usize) -> hkb_status;
    /// Waits for all work on the context's device.
    pub fn hkb_context_synchronize(ctx: hkb_context) -> hkb_status;
    /// Multiprocessors the context's kernels split their work over.
    pub fn hkb_context_multiprocessors(ctx: hkb_context, count: *mut u32) -> hkb_status;
    /// Sets that count for every module of the context (0: the default).
    pub fn hkb_context_set_multiprocessors(ctx: hkb_context, count: u32) -> hkb_status;

    /// Looks a kernel up by name, loading its module on first use.
    pub fn hkb_function_get(
        ctx: hkb_context,
        name: *const c_char,
        fn_: *mut hkb_function,
    ) -> hkb_status;
    /// The kernel's name.
    pub fn hkb_function_name(fn_: hkb_function) -> *const c_char;
    /// Number of parameters of the kernel's signature.
    pub fn hkb_function_num_params(fn_: hkb_function) -> usize;
    /// Byte size of parameter `index`; 0 if out of range.
    pub fn hkb_function_param_size(fn_: hkb_function, index: usize) -> usize;

    /// cudarc's `LaunchConfig::for_num_elems`: block 1024, grid ceil(n / 1024).
    pub fn hkb_launch_config_for_num_elems(n: u32) -> hkb_launch_config;
    /// hkb's fastest launch of `n` elements of `fn_` on its device, written to `config`: for the
    /// elementwise kernels block 1024 and the blocks the device holds at once (never more than
    /// ceil(n / 1024)); candle's `for_num_elems(n)` where hkb has no better launch;
    /// `HKB_ERROR_INVALID_ARGUMENT` for kernels candle does not size by an element count.
    pub fn hkb_launch_config_tuned(
        fn_: hkb_function,
        n: u64,
        config: *mut hkb_launch_config,
    ) -> hkb_status;

    /// Launches a kernel; `args[i]` points to a host copy of argument `i` of `arg_sizes[i]` bytes.
    pub fn hkb_launch(
        fn_: hkb_function,
        config: *const hkb_launch_config,
        stream: hkb_stream,
        args: *const *mut c_void,
        arg_sizes: *const usize,
        num_args: usize,
    ) -> hkb_status;

    /// Creates a stream on the context's device.
    pub fn hkb_stream_create(ctx: hkb_context, stream: *mut hkb_stream) -> hkb_status;
    /// Destroys a stream and frees its handle.
    pub fn hkb_stream_destroy(stream: hkb_stream) -> hkb_status;
    /// Waits for the stream's work.
    pub fn hkb_stream_synchronize(stream: hkb_stream) -> hkb_status;

    /// Allocates device memory (0 bytes gives address 0).
    pub fn hkb_malloc(ctx: hkb_context, bytes: usize, ptr: *mut hkb_devptr) -> hkb_status;
    /// Frees memory from `hkb_malloc`; address 0 does nothing.
    pub fn hkb_free(ctx: hkb_context, ptr: hkb_devptr) -> hkb_status;
    /// Copies host memory to the device.
    pub fn hkb_memcpy_htod(
        ctx: hkb_context,
        dst: hkb_devptr,
        src: *const c_void,
        bytes: usize,
    ) -> hkb_status;
    /// Copies device memory to the host.
    pub fn hkb_memcpy_dtoh(
        ctx: hkb_context,
        dst: *mut c_void,
        src: hkb_devptr,
        bytes: usize,
    ) -> hkb_status;
    /// Copies between device buffers.
    pub fn hkb_memcpy_dtod(
        ctx: hkb_context,
        dst: hkb_devptr,
        src: hkb_devptr,
        bytes: usize,
    ) -> hkb_status;
    /// Sets device bytes to `value`.
    pub fn hkb_memset_d8(ctx: hkb_context, dst: hkb_devptr, value: u8, bytes: usize) -> hkb_status;
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use core::ffi::CStr;
    use core::mem::{align_of, offset_of, size_of};
    use core::ptr;
    use std::string::String;

    fn cstr(p: *const c_char) -> String {
        assert!(!p.is_null());
        unsafe { CStr::from_ptr(p) }.to_str().unwrap().into()
    }

    #[test]
    fn launch_config_layout_matches_c() {
        // struct { uint32_t grid[3]; uint32_t block[3]; uint32_t shared_mem_bytes; }
        assert_eq!(size_of::<hkb_launch_config>(), 28);
        assert_eq!(align_of::<hkb_launch_config>(), 4);
        assert_eq!(offset_of!(hkb_launch_config, grid), 0);
        assert_eq!(offset_of!(hkb_launch_config, block), 12);
        assert_eq!(offset_of!(hkb_launch_config, shared_mem_bytes), 24);
    }

    #[test]
    fn scalar_and_handle_sizes_match_c() {
        // A C enum whose values fit in int is int-sized on every target hkb supports.
        assert_eq!(size_of::<hkb_status>(), 4);
        assert_eq!(size_of::<hkb_devptr>(), 8);
        assert_eq!(size_of::<hkb_context>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<hkb_function>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<hkb_stream>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<hkb_context_s>(), 0);
    }

    #[test]
    fn library_abi_matches_these_bindings() {
        let (mut major, mut minor, mut patch, mut abi) = (-1, -1, -1, -1);
        unsafe { hkb_version(&mut major, &mut minor, &mut patch, &mut abi) };
        assert_eq!(abi, HKB_ABI_VERSION, "libhkb {major}.{minor}.{patch}");
        assert_eq!(major, HKB_VERSION_MAJOR);
        assert!(minor >= HKB_VERSION_MINOR, "libhkb {major}.{minor}.{patch}");
    }

    #[test]
    fn crate_version_is_the_header_version() {
        let part = |s: &str| s.parse::<c_int>().unwrap();
        assert_eq!(part(env!("CARGO_PKG_VERSION_MAJOR")), HKB_VERSION_MAJOR);
        assert_eq!(part(env!("CARGO_PKG_VERSION_MINOR")), HKB_VERSION_MINOR);
        assert_eq!(part(env!("CARGO_PKG_VERSION_PATCH")), HKB_VERSION_PATCH);
    }

    #[test]
    fn platform_is_amd_or_nvidia() {
        let p = cstr(unsafe { hkb_platform() });
        assert!(p == "amd" || p == "nvidia", "hkb_platform() = {p:?}");
    }

    #[test]
    fn status_strings_name_the_same_constants() {
        // The library names each status after its C constant; equal names show that these
        // constants carry the header's values.
        for (value, name) in HKB_STATUS_NAMES.iter().enumerate() {
            let s = cstr(unsafe { hkb_status_string(value as hkb_status) });
            assert_eq!(s, *name, "status {value}");
        }
        // An unknown value still yields a string, never null.
        let s = cstr(unsafe { hkb_status_string(1000) });
        assert!(!s.is_empty());
    }

    #[test]
    fn for_num_elems_is_returned_by_value() {
        let c = unsafe { hkb_launch_config_for_num_elems(1025) };
        assert_eq!(
            c,
            hkb_launch_config {
                grid: [2, 1, 1],
                block: [1024, 1, 1],
                shared_mem_bytes: 0
            }
        );
        let c = unsafe { hkb_launch_config_for_num_elems(0) };
        assert_eq!(c.grid, [0, 1, 1]);
        assert_eq!(c.block, [1024, 1, 1]);
    }

    #[test]
    fn tuned_config_rejects_a_null_function() {
        let mut c = hkb_launch_config::default();
        let status = unsafe { hkb_launch_config_tuned(ptr::null_mut(), 10, &mut c) };
        assert_eq!(status, HKB_ERROR_INVALID_ARGUMENT);
        assert!(!cstr(unsafe { hkb_last_error() }).is_empty());
        assert_eq!(c, hkb_launch_config::default());
    }

    #[test]
    fn null_handles_are_rejected_with_a_message() {
        let mut f: hkb_function = ptr::null_mut();
        let status = unsafe { hkb_function_get(ptr::null_mut(), c"affine_f32".as_ptr(), &mut f) };
        assert_eq!(status, HKB_ERROR_INVALID_ARGUMENT);
        assert!(!cstr(unsafe { hkb_last_error() }).is_empty());
        assert!(f.is_null());

        let cfg = hkb_launch_config {
            grid: [1, 1, 1],
            block: [1, 1, 1],
            shared_mem_bytes: 0,
        };
        let status = unsafe {
            hkb_launch(
                ptr::null_mut(),
                &cfg,
                ptr::null_mut(),
                ptr::null(),
                ptr::null(),
                0,
            )
        };
        assert_eq!(status, HKB_ERROR_INVALID_ARGUMENT);
        assert!(!cstr(unsafe { hkb_last_error() }).is_empty());
    }

    #[test]
    fn out_of_range_ordinal_is_no_device() {
        let mut count: c_int = -1;
        let counted = unsafe { hkb_device_count(&mut count) };
        let mut ctx: hkb_context = ptr::null_mut();
        if counted != HKB_SUCCESS {
            // The runtime itself is unusable here; any context request must fail too.
            let status = unsafe { hkb_context_get(0, &mut ctx) };
            assert_ne!(status, HKB_SUCCESS);
            return;
        }
        let status = unsafe { hkb_context_get(count, &mut ctx) };
        assert_eq!(
            status, HKB_ERROR_NO_DEVICE,
            "ordinal {count} of {count} devices"
        );
        assert!(!cstr(unsafe { hkb_last_error() }).is_empty());
        assert!(ctx.is_null());
    }
}
