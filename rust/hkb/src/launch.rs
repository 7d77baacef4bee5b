use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::size_of;

use hkb_sys as sys;

use crate::device::{Function, Stream};
use crate::dtype::{DeviceCopy, DevicePtr, DeviceRepr};
use crate::error::{check, Result};
use crate::memory::{DeviceBuffer, DeviceView};

/// Launch geometry, field for field cudarc's `LaunchConfig`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in x, y, z; any zero launches nothing.
    pub grid_dim: (u32, u32, u32),
    /// Threads per block in x, y, z; 1 to 1024 in total.
    pub block_dim: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// cudarc's `LaunchConfig::for_num_elems`, which candle uses for every elementwise kernel:
    /// block (1024,1,1), grid (ceil(n/1024),1,1), no shared memory. `n == 0` gives grid 0, which
    /// launches nothing. (cudarc computes `(n + 1023) / 1024`, which overflows within 1023 of
    /// `u32::MAX`; this gives the mathematically right grid there and the same grid elsewhere.)
    pub const fn for_num_elems(n: u32) -> Self {
        const NUM_THREADS: u32 = 1024;
        LaunchConfig {
            grid_dim: (n.div_ceil(NUM_THREADS), 1, 1),
            block_dim: (NUM_THREADS, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// hkb's fastest launch of `n` elements of `func` on its device (`hkb_launch_config_tuned`).
    /// For the elementwise kernels (affine, binary, cast, fill, const_set, copy2d, where, unary):
    /// block 1024 and b = min(ceil(n / (1024 * e)), 8192) blocks, `e` the elements of two
    /// 16-byte packs of the kernel's widest element, as the grid (b, 1, 1) up to 1024 blocks and
    /// (ceil(b / y), y, 1), y = ceil(b / 1024), past it; every block works on contiguous data,
    /// and these kernels loop over their work, so the result is exact for every `n`. For kernels
    /// where hkb has no better launch (conv, indexing, rope): candle's own, `for_num_elems(n)` for
    /// 64-bit `n`. Other kernels (reductions, norms, softmax, sort, quantized) take a geometry candle
    /// derives from the op's shape: an error with status `HKB_ERROR_INVALID_ARGUMENT`.
    pub fn tuned(func: &Function, n: u64) -> Result<Self> {
        let mut c = sys::hkb_launch_config::default();
        // SAFETY: valid function handle; `c` is a valid output.
        check(unsafe { sys::hkb_launch_config_tuned(func.raw(), n, &mut c) })?;
        Ok(c.into())
    }
}

impl From<sys::hkb_launch_config> for LaunchConfig {
    fn from(c: sys::hkb_launch_config) -> Self {
        LaunchConfig {
            grid_dim: (c.grid[0], c.grid[1], c.grid[2]),
            block_dim: (c.block[0], c.block[1], c.block[2]),
            shared_mem_bytes: c.shared_mem_bytes,
        }
    }
}

impl From<LaunchConfig> for sys::hkb_launch_config {
    fn from(c: LaunchConfig) -> Self {
        sys::hkb_launch_config {
            grid: [c.grid_dim.0, c.grid_dim.1, c.grid_dim.2],
            block: [c.block_dim.0, c.block_dim.1, c.block_dim.2],
            shared_mem_bytes: c.shared_mem_bytes,
        }
    }
}

/// Kernel arguments in order, each kept as a host copy of exactly the parameter's bytes, as
/// cudarc's `.arg(&x)` builder hands them to `cuLaunchKernel`. The library checks their count and
/// sizes against the kernel's signature before launching.
///
/// `'a` is the lifetime of the device buffers passed in: they stay borrowed (and therefore
/// allocated) until the arguments are dropped. Scalars are copied, so temporaries are fine.
///
/// ```compile_fail
/// # fn f(dev: &hkb::Device) -> hkb::Result<()> {
/// let buf = dev.alloc::<f32>(4)?;
/// let mut args = hkb::LaunchArgs::new();
/// args.arg(&buf);
/// drop(buf); // `buf` is still borrowed by `args`
/// assert_eq!(args.len(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct LaunchArgs<'a> {
    // Each argument starts on an 8-byte boundary: `u64` words give that alignment.
    words: Vec<u64>,
    offsets: Vec<usize>,
    sizes: Vec<usize>,
    _buffers: PhantomData<&'a ()>,
}

impl<'a> LaunchArgs<'a> {
    /// No arguments yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an argument: `&scalar` (integers, `f32`/`f64`, `bool`, `F16`/`Bf16`/`F8E4M3`,
    /// `DevicePtr`), `&DeviceBuffer<T>`, a `DeviceView`, or `Option<&DeviceBuffer<T>>` (`None`
    /// passes a null pointer).
    pub fn arg<A: KernelArg<'a>>(&mut self, arg: A) -> &mut Self {
        arg.push_to(self);
        self
    }

    /// Appends the bytes of one by-value argument.
    pub fn push<T: DeviceRepr>(&mut self, value: T) -> &mut Self {
        let bytes = size_of::<T>();
        let offset = self.words.len();
        self.words.resize(offset + bytes.div_ceil(8).max(1), 0);
        // SAFETY: the destination holds at least `bytes` bytes starting at word `offset`, and
        // DeviceRepr types are plain bytes without padding.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&value as *const T).cast::<u8>(),
                self.words.as_mut_ptr().add(offset).cast::<u8>(),
                bytes,
            );
        }
        self.offsets.push(offset);
        self.sizes.push(bytes);
        self
    }

    /// Number of arguments added.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether no argument was added.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Byte size of each argument, in order.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The host copy of argument `index`.
    pub fn bytes(&self, index: usize) -> &[u8] {
        let start = self.offsets[index];
        // SAFETY: words[start..] holds at least sizes[index] initialised bytes.
        unsafe {
            std::slice::from_raw_parts(
                self.words.as_ptr().add(start).cast::<u8>(),
                self.sizes[index],
            )
        }
    }

    /// Calls `f` with the `void**` array of pointers to the host copies, without allocating for
    /// the common case of at most 32 arguments.
    pub(crate) fn with_pointers<R>(&self, f: impl FnOnce(*const *mut c_void) -> R) -> R {
        let base = self.words.as_ptr() as *mut u64;
        // SAFETY (for each add): every offset is within `words`. The library only reads them.
        let ptr = |i: usize| unsafe { base.add(self.offsets[i]).cast::<c_void>() };
        const INLINE: usize = 32;
        if self.len() <= INLINE {
            let mut ptrs = [std::ptr::null_mut::<c_void>(); INLINE];
            for (i, p) in ptrs.iter_mut().enumerate().take(self.len()) {
                *p = ptr(i);
            }
            f(ptrs.as_ptr())
        } else {
            let ptrs: Vec<*mut c_void> = (0..self.len()).map(ptr).collect();
            f(ptrs.as_ptr())
        }
    }
}

/// What `LaunchArgs::arg` accepts.
pub trait KernelArg<'a> {
    /// Appends this argument's host copy to `args`.
    fn push_to(self, args: &mut LaunchArgs<'a>);
}

impl<'a, T: DeviceRepr> KernelArg<'a> for &T {
    fn push_to(self, args: &mut LaunchArgs<'a>) {
        args.push(*self);
    }
}

impl<'a, T: DeviceCopy> KernelArg<'a> for &'a DeviceBuffer<T> {
    fn push_to(self, args: &mut LaunchArgs<'a>) {
        args.push(self.device_ptr());
    }
}

impl<'a, T: DeviceCopy> KernelArg<'a> for &'a mut DeviceBuffer<T> {
    fn push_to(self, args: &mut LaunchArgs<'a>) {
        args.push(self.device_ptr());
    }
}

impl<'a, T: DeviceCopy> KernelArg<'a> for Option<&'a DeviceBuffer<T>> {
    fn push_to(self, args: &mut LaunchArgs<'a>) {
        args.push(self.map_or(DevicePtr::NULL, DeviceBuffer::device_ptr));
    }
}

impl<'a, T: DeviceCopy> KernelArg<'a> for DeviceView<'a, T> {
    fn push_to(self, args: &mut LaunchArgs<'a>) {
        args.push(self.device_ptr());
    }
}

impl<'a, T: DeviceCopy> KernelArg<'a> for &DeviceView<'a, T> {
    fn push_to(self, args: &mut LaunchArgs<'a>) {
        args.push(self.device_ptr());
    }
}

/// cudarc's launch builder: arguments collected for one function on one stream.
///
/// ```no_run
/// # fn main() -> hkb::Result<()> {
/// use hkb::{Device, DevicePtr, LaunchConfig};
/// let dev = Device::new(0)?;
/// let inp = dev.htod_copy(&[1.0f32, 2.0, 3.0])?;
/// let out = dev.alloc::<f32>(3)?;
/// let func = dev.get_func("affine_f32")?;
/// let n = inp.len();
/// let mut builder = func.builder();
/// builder.arg(&n).arg(&0usize).arg(&DevicePtr::NULL).arg(&inp).arg(&out);
/// builder.arg(&2.0f32).arg(&1.0f32);
/// // SAFETY: affine_f32 reads n floats of inp and writes n floats of out.
/// unsafe { builder.launch(LaunchConfig::for_num_elems(n as u32)) }?;
/// assert_eq!(out.dtoh()?, [3.0, 5.0, 7.0]);
/// # Ok(())
/// # }
/// ```
pub struct LaunchBuilder<'a> {
    func: &'a Function,
    stream: Option<&'a Stream>,
    args: LaunchArgs<'a>,
}

impl<'a> LaunchBuilder<'a> {
    pub(crate) fn new(func: &'a Function, stream: Option<&'a Stream>) -> Self {
        Self {
            func,
            stream,
            args: LaunchArgs::new(),
        }
    }

    /// Appends one argument.
    pub fn arg<A: KernelArg<'a>>(&mut self, arg: A) -> &mut Self {
        self.args.arg(arg);
        self
    }

    /// The arguments added so far.
    pub fn args(&self) -> &LaunchArgs<'a> {
        &self.args
    }

    /// Launches with the collected arguments (they are kept, so the builder can launch again).
    ///
    /// # Safety
    /// As [`Function::launch`].
    pub unsafe fn launch(&mut self, config: LaunchConfig) -> Result<()> {
        match self.stream {
            Some(stream) => self.func.launch_on(stream, config, &self.args),
            None => self.func.launch(config, &self.args),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{Bf16, F16, F8E4M3};

    #[test]
    fn for_num_elems_matches_cudarc() {
        let cfg = |n| LaunchConfig::for_num_elems(n);
        assert_eq!(
            cfg(0),
            LaunchConfig {
                grid_dim: (0, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0
            }
        );
        assert_eq!(cfg(1).grid_dim, (1, 1, 1));
        assert_eq!(cfg(1023).grid_dim, (1, 1, 1));
        assert_eq!(cfg(1024).grid_dim, (1, 1, 1));
        assert_eq!(cfg(1025).grid_dim, (2, 1, 1));
        assert_eq!(cfg(1025).block_dim, (1024, 1, 1));
        assert_eq!(cfg(1025).shared_mem_bytes, 0);
        assert_eq!(cfg(1 << 20).grid_dim, (1024, 1, 1));
        assert_eq!(cfg(u32::MAX - 1023).grid_dim, (4_194_303, 1, 1));
        assert_eq!(cfg(u32::MAX).grid_dim, (4_194_304, 1, 1));
        // cudarc's own formula, spelled as cudarc spells it, wherever it does not overflow.
        #[allow(clippy::manual_div_ceil)]
        for n in (0u32..5000).chain([1 << 20, (1 << 20) + 1, u32::MAX - 1024]) {
            assert_eq!(cfg(n).grid_dim.0, (n + 1023) / 1024, "n = {n}");
        }
    }

    #[test]
    fn for_num_elems_agrees_with_the_library() {
        for n in [
            0u32,
            1,
            2,
            1023,
            1024,
            1025,
            2047,
            2048,
            2049,
            1 << 20,
            u32::MAX,
        ] {
            let c = unsafe { sys::hkb_launch_config_for_num_elems(n) };
            assert_eq!(c, LaunchConfig::for_num_elems(n).into(), "n = {n}");
        }
    }

    #[test]
    fn config_converts_back_from_the_c_struct() {
        let raw = sys::hkb_launch_config {
            grid: [1, 2, 3],
            block: [4, 5, 6],
            shared_mem_bytes: 7,
        };
        let c: LaunchConfig = raw.into();
        assert_eq!(c.grid_dim, (1, 2, 3));
        assert_eq!(c.block_dim, (4, 5, 6));
        assert_eq!(c.shared_mem_bytes, 7);
        assert_eq!(sys::hkb_launch_config::from(c), raw);
    }

    #[test]
    fn config_converts_field_by_field() {
        let c = LaunchConfig {
            grid_dim: (1, 2, 3),
            block_dim: (4, 5, 6),
            shared_mem_bytes: 7,
        };
        let raw: sys::hkb_launch_config = c.into();
        assert_eq!(raw.grid, [1, 2, 3]);
        assert_eq!(raw.block, [4, 5, 6]);
        assert_eq!(raw.shared_mem_bytes, 7);
    }

    #[test]
    fn args_keep_order_sizes_and_bytes() {
        let mut args = LaunchArgs::new();
        assert!(args.is_empty());
        let numel = 1025usize;
        args.arg(&numel)
            .arg(&2usize)
            .arg(&DevicePtr::NULL)
            .arg(&DevicePtr(0x7000_0000_1234))
            .arg(&-1.5f32)
            .arg(&0.25f64)
            .arg(&true)
            .arg(&0xABu8)
            .arg(&0xBEEFu16)
            .arg(&0xDEAD_BEEFu32)
            .arg(&u64::MAX)
            .arg(&-2i16)
            .arg(&-3i32)
            .arg(&i64::MIN)
            .arg(&F16(0x3C00))
            .arg(&Bf16(0x3F80))
            .arg(&F8E4M3(0x7E));
        assert_eq!(args.len(), 17);
        assert_eq!(
            args.sizes(),
            &[8, 8, 8, 8, 4, 8, 1, 1, 2, 4, 8, 2, 4, 8, 2, 2, 1]
        );
        assert_eq!(args.bytes(0), &1025u64.to_ne_bytes());
        assert_eq!(args.bytes(1), &2u64.to_ne_bytes());
        assert_eq!(args.bytes(2), &[0; 8]);
        assert_eq!(args.bytes(3), &0x7000_0000_1234u64.to_ne_bytes());
        assert_eq!(args.bytes(4), &(-1.5f32).to_ne_bytes());
        assert_eq!(args.bytes(5), &0.25f64.to_ne_bytes());
        assert_eq!(args.bytes(6), &[1]);
        assert_eq!(args.bytes(7), &[0xAB]);
        assert_eq!(args.bytes(8), &0xBEEFu16.to_ne_bytes());
        assert_eq!(args.bytes(9), &0xDEAD_BEEFu32.to_ne_bytes());
        assert_eq!(args.bytes(10), &[0xFF; 8]);
        assert_eq!(args.bytes(11), &(-2i16).to_ne_bytes());
        assert_eq!(args.bytes(12), &(-3i32).to_ne_bytes());
        assert_eq!(args.bytes(13), &i64::MIN.to_ne_bytes());
        assert_eq!(args.bytes(14), &0x3C00u16.to_ne_bytes());
        assert_eq!(args.bytes(15), &0x3F80u16.to_ne_bytes());
        assert_eq!(args.bytes(16), &[0x7E]);
    }

    #[test]
    fn scalars_are_copied_so_temporaries_work() {
        let mut args = LaunchArgs::new();
        {
            let n = 7usize;
            args.arg(&(n as u32)).arg(&(n * 2));
        }
        assert_eq!(args.bytes(0), &7u32.to_ne_bytes());
        assert_eq!(args.bytes(1), &14usize.to_ne_bytes());
    }

    #[test]
    fn pointer_array_points_at_aligned_host_copies() {
        let mut args = LaunchArgs::new();
        args.arg(&1u8).arg(&2u64).arg(&3u16).arg(&4.0f32);
        args.with_pointers(|ptrs| {
            let ptrs = unsafe { std::slice::from_raw_parts(ptrs, 4) };
            for p in ptrs {
                assert_eq!(*p as usize % 8, 0);
            }
            unsafe {
                assert_eq!(*(ptrs[0] as *const u8), 1);
                assert_eq!(*(ptrs[1] as *const u64), 2);
                assert_eq!(*(ptrs[2] as *const u16), 3);
                assert_eq!(*(ptrs[3] as *const f32), 4.0);
            }
        });
    }

    #[test]
    fn more_than_32_arguments_are_passed_too() {
        let mut args = LaunchArgs::new();
        for i in 0..40u32 {
            args.arg(&i);
        }
        args.with_pointers(|ptrs| {
            let ptrs = unsafe { std::slice::from_raw_parts(ptrs, 40) };
            for (i, p) in ptrs.iter().enumerate() {
                assert_eq!(unsafe { *(*p as *const u32) }, i as u32);
            }
        });
    }
}
