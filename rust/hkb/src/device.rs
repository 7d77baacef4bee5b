use std::collections::HashMap;
use std::ffi::{c_char, c_int, CString};
use std::sync::{Arc, OnceLock, RwLock};

use hkb_sys as sys;

use crate::dtype::DeviceCopy;
use crate::error::{check, string_from, Error, Result};
use crate::launch::{LaunchArgs, LaunchBuilder, LaunchConfig};
use crate::memory::DeviceBuffer;

/// A handle the library owns; `hkb.h` allows every call from any thread.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Handle<P>(P);
// SAFETY: libhkb's handles are thread-safe ("every function may be called from any thread").
unsafe impl<P> Send for Handle<P> {}
unsafe impl<P> Sync for Handle<P> {}

/// The version of the loaded libhkb and its ABI number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    /// Major version.
    pub major: i32,
    /// Minor version.
    pub minor: i32,
    /// Patch version.
    pub patch: i32,
    /// Version of the C ABI (`HKB_ABI_VERSION`).
    pub abi: i32,
}

/// The version of the libhkb actually loaded.
pub fn version() -> Version {
    let (mut major, mut minor, mut patch, mut abi) = (0, 0, 0, 0);
    // SAFETY: four valid out-pointers.
    unsafe { sys::hkb_version(&mut major, &mut minor, &mut patch, &mut abi) };
    Version {
        major,
        minor,
        patch,
        abi,
    }
}

/// `"amd"` or `"nvidia"`: the flavour the loaded library was built as.
pub fn platform() -> String {
    // SAFETY: returns a static string.
    unsafe { string_from(sys::hkb_platform()) }
}

/// Initialises the library now rather than on first use.
pub fn init() -> Result<()> {
    check_abi()?;
    // SAFETY: no arguments.
    check(unsafe { sys::hkb_init() })
}

/// Synchronises every device, unloads all modules and invalidates every handle: existing
/// `Device`s, `Function`s, `Stream`s and buffers then fail with `HKB_ERROR_SHUT_DOWN` (dropping
/// them stays harmless). A later call starts the library afresh.
pub fn shutdown() -> Result<()> {
    // SAFETY: no arguments; old handles are invalidated by the library, not dangling.
    check(unsafe { sys::hkb_shutdown() })
}

/// The bindings and the loaded library must agree on the ABI before any handle crosses it.
fn check_abi() -> Result<()> {
    static CHECKED: OnceLock<Result<()>> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let v = version();
            if v.abi == sys::HKB_ABI_VERSION {
                Ok(())
            } else {
                Err(Error::new(
                    sys::HKB_ERROR_RUNTIME,
                    format!(
                        "libhkb {}.{}.{} has ABI {}, these bindings were written for ABI {}",
                        v.major,
                        v.minor,
                        v.patch,
                        v.abi,
                        sys::HKB_ABI_VERSION
                    ),
                ))
            }
        })
        .clone()
}

struct DeviceInner {
    ctx: Handle<sys::hkb_context>,
    ordinal: usize,
    target: String,
    functions: RwLock<HashMap<String, Handle<sys::hkb_function>>>,
}

/// One GPU, like cudarc's `CudaContext`: cheap to clone (shared), usable from any thread.
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

impl Device {
    /// Number of devices the library sees; 0 (not an error) on a machine without GPUs.
    pub fn count() -> Result<usize> {
        check_abi()?;
        let mut n: c_int = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::hkb_device_count(&mut n) })?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// The device `ordinal`; `HKB_ERROR_NO_DEVICE` without a GPU or past the last one.
    pub fn new(ordinal: usize) -> Result<Self> {
        check_abi()?;
        let c_ordinal = c_int::try_from(ordinal).map_err(|_| {
            Error::new(
                sys::HKB_ERROR_NO_DEVICE,
                format!("device ordinal {ordinal} is out of range"),
            )
        })?;
        let mut ctx: sys::hkb_context = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::hkb_context_get(c_ordinal, &mut ctx) })?;
        let mut buf = [0 as c_char; 256];
        // SAFETY: buf holds buf.len() bytes; the library NUL-terminates within them.
        check(unsafe { sys::hkb_context_target(ctx, buf.as_mut_ptr(), buf.len()) })?;
        buf[buf.len() - 1] = 0;
        // SAFETY: NUL-terminated above.
        let target = unsafe { string_from(buf.as_ptr()) };
        Ok(Device {
            inner: Arc::new(DeviceInner {
                ctx: Handle(ctx),
                ordinal,
                target,
                functions: RwLock::new(HashMap::new()),
            }),
        })
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
    }

    /// The device's target ID, e.g. `"gfx90a:sramecc+:xnack-"` or `"sm_90"`.
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// The C context handle, for calls this crate does not wrap.
    pub fn raw(&self) -> sys::hkb_context {
        self.inner.ctx.0
    }

    /// The kernel `name` (candle's symbol, e.g. `"affine_f32"`), loading its module on this
    /// device on first use. Unknown names fail with `HKB_ERROR_UNKNOWN_KERNEL` and a message
    /// listing the nearest existing names.
    pub fn get_func(&self, name: &str) -> Result<Function> {
        let cached = self
            .inner
            .functions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .copied();
        let raw = match cached {
            Some(raw) => raw,
            None => {
                let c_name = CString::new(name).map_err(|_| {
                    Error::new(
                        sys::HKB_ERROR_INVALID_ARGUMENT,
                        format!("kernel name {name:?} contains NUL"),
                    )
                })?;
                let mut f: sys::hkb_function = std::ptr::null_mut();
                // SAFETY: valid context, NUL-terminated name, valid out-pointer.
                check(unsafe { sys::hkb_function_get(self.raw(), c_name.as_ptr(), &mut f) })?;
                let raw = Handle(f);
                let mut map = self
                    .inner
                    .functions
                    .write()
                    .unwrap_or_else(|e| e.into_inner());
                *map.entry(name.to_owned()).or_insert(raw)
            }
        };
        Ok(Function {
            raw,
            name: name.into(),
            device: self.clone(),
        })
    }

    /// Waits for all work on the device.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: valid context.
        check(unsafe { sys::hkb_context_synchronize(self.raw()) })
    }

    /// Multiprocessors the kernels split their work over: the device's own unless
    /// `HKB_MULTIPROCESSORS` or [`Device::set_multiprocessors`] says otherwise.
    pub fn multiprocessors(&self) -> Result<u32> {
        let mut n: u32 = 0;
        // SAFETY: valid context and out-pointer.
        check(unsafe { sys::hkb_context_multiprocessors(self.raw(), &mut n) })?;
        Ok(n)
    }

    /// Sets that count (1 to 65536; 0 restores the default) for every module of the device,
    /// after its work finishes. Results never depend on it, only speed.
    pub fn set_multiprocessors(&self, count: u32) -> Result<()> {
        // SAFETY: valid context.
        check(unsafe { sys::hkb_context_set_multiprocessors(self.raw(), count) })
    }

    /// The device's default stream (what `Function::launch` uses).
    pub fn default_stream(&self) -> Stream {
        Stream {
            raw: Handle(std::ptr::null_mut()),
            device: self.clone(),
        }
    }

    /// A new stream; it does not synchronise with the default stream.
    pub fn new_stream(&self) -> Result<Stream> {
        let mut s: sys::hkb_stream = std::ptr::null_mut();
        // SAFETY: valid context and out-pointer.
        check(unsafe { sys::hkb_stream_create(self.raw(), &mut s) })?;
        Ok(Stream {
            raw: Handle(s),
            device: self.clone(),
        })
    }

    /// `len` elements, uninitialised.
    pub fn alloc<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::alloc(self, len)
    }

    /// `len` elements, every byte zero.
    pub fn alloc_zeros<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let mut buf = DeviceBuffer::alloc(self, len)?;
        buf.memset_zeros()?;
        Ok(buf)
    }

    /// A new buffer holding a copy of `src`.
    pub fn htod_copy<T: DeviceCopy>(&self, src: &[T]) -> Result<DeviceBuffer<T>> {
        let mut buf = DeviceBuffer::alloc(self, src.len())?;
        buf.htod(src)?;
        Ok(buf)
    }

    /// A host copy of `buf` (after the default stream's prior work).
    pub fn dtoh_sync_copy<T: DeviceCopy>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>> {
        buf.dtoh()
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.inner.ordinal)
            .field("target", &self.inner.target)
            .finish()
    }
}

/// A kernel on one device, like cudarc's `CudaFunction`.
#[derive(Clone)]
pub struct Function {
    raw: Handle<sys::hkb_function>,
    name: Arc<str>,
    device: Device,
}

impl Function {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device this kernel is loaded on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The C function handle.
    pub fn raw(&self) -> sys::hkb_function {
        self.raw.0
    }

    /// Number of parameters in the kernel's signature.
    pub fn num_params(&self) -> usize {
        // SAFETY: valid function handle.
        unsafe { sys::hkb_function_num_params(self.raw()) }
    }

    /// Byte size of each parameter, in order.
    pub fn param_sizes(&self) -> Vec<usize> {
        (0..self.num_params())
            // SAFETY: valid function handle, index in range.
            .map(|i| unsafe { sys::hkb_function_param_size(self.raw(), i) })
            .collect()
    }

    /// A cudarc-style builder launching on the default stream.
    pub fn builder(&self) -> LaunchBuilder<'_> {
        LaunchBuilder::new(self, None)
    }

    /// Launches on the device's default stream.
    ///
    /// # Safety
    /// The library checks the argument count and sizes against the kernel's signature, nothing
    /// more: every device pointer must address live memory of this device, large enough for all
    /// the kernel reads and writes under these arguments and this geometry, and the memory must
    /// not be freed or used concurrently until the kernel has finished.
    pub unsafe fn launch(&self, config: LaunchConfig, args: &LaunchArgs<'_>) -> Result<()> {
        self.launch_raw(config, std::ptr::null_mut(), args)
    }

    /// Launches on `stream`, which must belong to this function's device.
    ///
    /// # Safety
    /// As [`Function::launch`].
    pub unsafe fn launch_on(
        &self,
        stream: &Stream,
        config: LaunchConfig,
        args: &LaunchArgs<'_>,
    ) -> Result<()> {
        if stream.device.raw() != self.device.raw() {
            return Err(Error::new(
                sys::HKB_ERROR_INVALID_ARGUMENT,
                format!(
                    "{} belongs to device {}, the stream to device {}",
                    self.name,
                    self.device.ordinal(),
                    stream.device.ordinal()
                ),
            ));
        }
        self.launch_raw(config, stream.raw.0, args)
    }

    unsafe fn launch_raw(
        &self,
        config: LaunchConfig,
        stream: sys::hkb_stream,
        args: &LaunchArgs<'_>,
    ) -> Result<()> {
        let cfg: sys::hkb_launch_config = config.into();
        args.with_pointers(|ptrs| {
            check(sys::hkb_launch(
                self.raw(),
                &cfg,
                stream,
                ptrs,
                args.sizes().as_ptr(),
                args.len(),
            ))
        })
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("ordinal", &self.device.ordinal())
            .finish()
    }
}

/// A stream of one device: created by [`Device::new_stream`] (destroyed on drop) or the device's
/// default stream.
pub struct Stream {
    raw: Handle<sys::hkb_stream>,
    device: Device,
}

impl Stream {
    /// The device this stream belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The C stream handle (null for the default stream).
    pub fn raw(&self) -> sys::hkb_stream {
        self.raw.0
    }

    /// Whether this is the device's default stream.
    pub fn is_default(&self) -> bool {
        self.raw.0.is_null()
    }

    /// A cudarc-style builder launching `func` on this stream.
    pub fn launch_builder<'a>(&'a self, func: &'a Function) -> LaunchBuilder<'a> {
        LaunchBuilder::new(func, Some(self))
    }

    /// Waits for the work queued on this stream.
    pub fn synchronize(&self) -> Result<()> {
        if self.is_default() {
            // hkb_stream_synchronize(NULL) would not say which device's default stream.
            self.device.synchronize()
        } else {
            // SAFETY: a stream created by hkb_stream_create, not yet destroyed.
            check(unsafe { sys::hkb_stream_synchronize(self.raw.0) })
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.is_default() {
            // SAFETY: created by hkb_stream_create and destroyed once. A failure (the library was
            // shut down) leaves nothing to release.
            let _ = unsafe { sys::hkb_stream_destroy(self.raw.0) };
        }
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("ordinal", &self.device.ordinal())
            .field("default", &self.is_default())
            .finish()
    }
}
