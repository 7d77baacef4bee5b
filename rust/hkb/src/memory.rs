use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::{Bound, RangeBounds};

use hkb_sys as sys;

use crate::device::Device;
use crate::dtype::{DeviceCopy, DevicePtr};
use crate::error::{check, Error, Result};

/// An owned allocation of `len` elements of `T` on one device, freed on drop.
///
/// Copies go through the library's synchronous `hkb_memcpy_*`, which order with the default
/// stream only: after launching on a stream from [`Device::new_stream`], synchronise that stream
/// before reading results back.
pub struct DeviceBuffer<T: DeviceCopy> {
    device: Device,
    ptr: sys::hkb_devptr,
    len: usize,
    _elem: PhantomData<T>,
}

fn byte_len<T>(len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| {
        Error::new(
            sys::HKB_ERROR_OUT_OF_MEMORY,
            format!("{len} elements of {} bytes overflow usize", size_of::<T>()),
        )
    })
}

fn length_mismatch(what: &str, host: usize, device: usize) -> Error {
    Error::new(
        sys::HKB_ERROR_INVALID_ARGUMENT,
        format!("{what}: host slice has {host} elements, device buffer {device}"),
    )
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocates without initialising: the contents are whatever the memory held, which any
    /// `DeviceCopy` type can represent.
    pub(crate) fn alloc(device: &Device, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        let mut ptr: sys::hkb_devptr = 0;
        // SAFETY: the context is valid for the device's lifetime; ptr is a valid out-pointer.
        check(unsafe { sys::hkb_malloc(device.raw(), bytes, &mut ptr) })?;
        Ok(Self {
            device: device.clone(),
            ptr,
            len,
            _elem: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The device address of element 0 (0 for an empty buffer).
    pub fn device_ptr(&self) -> DevicePtr {
        DevicePtr(self.ptr)
    }

    /// The device address of element `index`, as candle passes a view at a start offset.
    /// `index == len()` (one past the end) is allowed.
    ///
    /// # Panics
    /// If `index > len()`.
    pub fn ptr_at(&self, index: usize) -> DevicePtr {
        assert!(
            index <= self.len,
            "index {index} past a buffer of {} elements",
            self.len
        );
        DevicePtr(self.ptr + (index * size_of::<T>()) as u64)
    }

    /// A borrowed sub-range, usable as a kernel argument.
    ///
    /// # Panics
    /// If the range is out of bounds or decreasing.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> DeviceView<'_, T> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e + 1,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        assert!(
            start <= end && end <= self.len,
            "range {start}..{end} out of a buffer of {} elements",
            self.len
        );
        DeviceView {
            ptr: self.ptr_at(start).0,
            len: end - start,
            _buffer: PhantomData,
        }
    }

    /// Copies `src` into the buffer; lengths must match.
    pub fn htod(&mut self, src: &[T]) -> Result<()> {
        if src.len() != self.len {
            return Err(length_mismatch("htod", src.len(), self.len));
        }
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: src holds size_bytes() readable bytes; the buffer holds as many.
        check(unsafe {
            sys::hkb_memcpy_htod(
                self.device.raw(),
                self.ptr,
                src.as_ptr().cast(),
                self.size_bytes(),
            )
        })
    }

    /// Copies the buffer into `dst`; lengths must match.
    pub fn dtoh_into(&self, dst: &mut [T]) -> Result<()> {
        if dst.len() != self.len {
            return Err(length_mismatch("dtoh", dst.len(), self.len));
        }
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: dst holds size_bytes() writable bytes, and any bytes are a valid T (DeviceCopy).
        check(unsafe {
            sys::hkb_memcpy_dtoh(
                self.device.raw(),
                dst.as_mut_ptr().cast(),
                self.ptr,
                self.size_bytes(),
            )
        })
    }

    /// Copies the buffer into a new vector.
    pub fn dtoh(&self) -> Result<Vec<T>> {
        let mut out = Vec::<T>::with_capacity(self.len);
        if self.len > 0 {
            // SAFETY: the capacity holds size_bytes() bytes; after a successful copy every byte is
            // initialised and any bytes are a valid T (DeviceCopy).
            unsafe {
                check(sys::hkb_memcpy_dtoh(
                    self.device.raw(),
                    out.as_mut_ptr().cast(),
                    self.ptr,
                    self.size_bytes(),
                ))?;
                out.set_len(self.len);
            }
        }
        Ok(out)
    }

    /// Copies another buffer of the same length on the device.
    pub fn copy_from(&mut self, src: &DeviceBuffer<T>) -> Result<()> {
        if src.len != self.len {
            return Err(length_mismatch("dtod", src.len, self.len));
        }
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: both allocations hold size_bytes() bytes and do not overlap (self is borrowed
        // mutably, src shared).
        check(unsafe {
            sys::hkb_memcpy_dtod(self.device.raw(), self.ptr, src.ptr, self.size_bytes())
        })
    }

    /// Sets every byte to zero.
    pub fn memset_zeros(&mut self) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: the allocation holds size_bytes() bytes.
        check(unsafe { sys::hkb_memset_d8(self.device.raw(), self.ptr, 0, self.size_bytes()) })
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr != 0 {
            // A failure here (the library was shut down, or a prior asynchronous error surfaces)
            // cannot be reported from drop; the allocation is gone either way.
            // SAFETY: ptr came from hkb_malloc on this context and is freed once.
            let _ = unsafe { sys::hkb_free(self.device.raw(), self.ptr) };
        }
    }
}

impl<T: DeviceCopy> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ordinal", &self.device.ordinal())
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .finish()
    }
}

/// A borrowed range of a [`DeviceBuffer`]; the buffer stays allocated while the view lives.
#[derive(Clone, Copy, Debug)]
pub struct DeviceView<'a, T: DeviceCopy> {
    ptr: sys::hkb_devptr,
    len: usize,
    _buffer: PhantomData<&'a DeviceBuffer<T>>,
}

impl<T: DeviceCopy> DeviceView<'_, T> {
    /// Number of elements in the view.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Device address of the view's first element.
    pub fn device_ptr(&self) -> DevicePtr {
        DevicePtr(self.ptr)
    }
}
