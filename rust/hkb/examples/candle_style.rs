//! Launches hkb kernels the way candle's CUDA backend launches its own through cudarc: look the
//! kernel up by name, build the arguments with `.arg(&x)`, `LaunchConfig::for_num_elems`, and a
//! device `[dims..., strides...]` info buffer (or a null pointer) describing the input layout.
//!
//! Runs `affine_f32` on a contiguous tensor, then a strided copy: `ucopy_f32` of a transposed
//! matrix when the library exports it, otherwise `const_set_f32` into a strided view. Exits 1 on a
//! mismatch or error, and 0 with a message when there is no device.

use std::process::ExitCode;

use hkb::{Device, DeviceBuffer, LaunchConfig};

/// A tensor layout as candle keeps it: dims, strides (in elements) and a start offset.
struct Layout {
    dims: Vec<usize>,
    stride: Vec<usize>,
    start_offset: usize,
}

impl Layout {
    fn contiguous(dims: &[usize]) -> Self {
        let mut stride = vec![1; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            stride[d] = stride[d + 1] * dims[d + 1];
        }
        Layout {
            dims: dims.to_vec(),
            stride,
            start_offset: 0,
        }
    }
    fn elem_count(&self) -> usize {
        self.dims.iter().product()
    }
    fn is_contiguous(&self) -> bool {
        *self.stride == *Layout::contiguous(&self.dims).stride
    }
    fn transpose(&self) -> Self {
        let mut t = Layout {
            dims: self.dims.clone(),
            stride: self.stride.clone(),
            start_offset: self.start_offset,
        };
        t.dims.swap(0, 1);
        t.stride.swap(0, 1);
        t
    }
    /// Offset of the logical row-major element `i`.
    fn offset(&self, mut i: usize) -> usize {
        let mut off = self.start_offset;
        for d in (0..self.dims.len()).rev() {
            off += (i % self.dims[d]) * self.stride[d];
            i /= self.dims[d];
        }
        off
    }
    /// candle's info buffer: `None` (null) when contiguous, else `[dims..., strides...]`.
    fn info(&self, dev: &Device) -> hkb::Result<Option<DeviceBuffer<usize>>> {
        if self.is_contiguous() {
            Ok(None)
        } else {
            Ok(Some(dev.htod_copy(
                &[self.dims.as_slice(), &self.stride].concat(),
            )?))
        }
    }
}

fn check(what: &str, got: &[f32], want: &[f32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements, want {}",
            got.len(),
            want.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.to_bits() != w.to_bits() {
            return Err(format!("{what}: element {i} is {g}, want {w}"));
        }
    }
    println!("ok: {what} ({} elements)", got.len());
    Ok(())
}

/// candle's `Affine` op: out = inp * mul + add over any layout, output contiguous.
fn affine(
    dev: &Device,
    src: &DeviceBuffer<f32>,
    layout: &Layout,
    mul: f32,
    add: f32,
) -> hkb::Result<DeviceBuffer<f32>> {
    let el = layout.elem_count();
    let cfg = LaunchConfig::for_num_elems(el as u32);
    let ds = layout.info(dev)?;
    let func = dev.get_func("affine_f32")?;
    let out = dev.alloc::<f32>(el)?;
    let src = src.slice(layout.start_offset..);
    let mut builder = func.builder();
    builder
        .arg(&el)
        .arg(&layout.dims.len())
        .arg(ds.as_ref())
        .arg(src)
        .arg(&out);
    builder.arg(&mul).arg(&add);
    // SAFETY: the kernel reads `el` elements of `src` at the layout's offsets, all inside `src`,
    // and writes `el` elements of `out`.
    unsafe { builder.launch(cfg) }?;
    Ok(out)
}

/// candle's `copy_strided_src`: a strided source into a contiguous destination.
fn ucopy(
    dev: &Device,
    func: &hkb::Function,
    src: &DeviceBuffer<f32>,
    layout: &Layout,
) -> hkb::Result<DeviceBuffer<f32>> {
    let el = layout.elem_count();
    let ds = dev.htod_copy(&[layout.dims.as_slice(), &layout.stride].concat())?;
    let out = dev.alloc::<f32>(el)?;
    let src = src.slice(layout.start_offset..);
    let mut builder = func.builder();
    builder
        .arg(&el)
        .arg(&layout.dims.len())
        .arg(&ds)
        .arg(src)
        .arg(&out);
    // SAFETY: every offset of the layout lies inside `src`; `out` holds `el` elements.
    unsafe { builder.launch(LaunchConfig::for_num_elems(el as u32)) }?;
    Ok(out)
}

/// candle's `const_set`: one value into every element of a (possibly strided) view of `dst`.
fn const_set(
    dev: &Device,
    dst: &DeviceBuffer<f32>,
    layout: &Layout,
    value: f32,
) -> hkb::Result<()> {
    let el = layout.elem_count();
    let ds = layout.info(dev)?;
    let func = dev.get_func("const_set_f32")?;
    let view = dst.slice(layout.start_offset..);
    let mut builder = func.builder();
    builder
        .arg(&el)
        .arg(&layout.dims.len())
        .arg(ds.as_ref())
        .arg(&value)
        .arg(view);
    // SAFETY: every offset of the layout lies inside `dst`.
    unsafe { builder.launch(LaunchConfig::for_num_elems(el as u32)) }
}

fn run(dev: &Device) -> Result<(), String> {
    let e = |e: hkb::Error| e.to_string();

    // affine on a contiguous 37x29 tensor (1073 elements: two blocks of 1024).
    let layout = Layout::contiguous(&[37, 29]);
    let host: Vec<f32> = (0..layout.elem_count())
        .map(|i| i as f32 * 0.5 - 200.0)
        .collect();
    let src = dev.htod_copy(&host).map_err(e)?;
    let (mul, add) = (1.5f32, 0.25f32);
    let out = affine(dev, &src, &layout, mul, add).map_err(e)?;
    let want: Vec<f32> = host.iter().map(|&x| x * mul + add).collect();
    check(
        "affine_f32 contiguous 37x29, mul 1.5 add 0.25",
        &out.dtoh().map_err(e)?,
        &want,
    )?;

    // A strided copy of the transposed tensor (dims 29x37, strides 1,29).
    let transposed = layout.transpose();
    match dev.get_func("ucopy_f32") {
        Ok(func) => {
            let out = ucopy(dev, &func, &src, &transposed).map_err(e)?;
            let want: Vec<f32> = (0..transposed.elem_count())
                .map(|i| host[transposed.offset(i)])
                .collect();
            check(
                "ucopy_f32 of the 29x37 transpose",
                &out.dtoh().map_err(e)?,
                &want,
            )?;
        }
        Err(err) if err.status() == hkb::sys::HKB_ERROR_UNKNOWN_KERNEL => {
            println!("ucopy_f32 is not in this library build; using const_set_f32 instead");
            // Column 3 of a 37x29 buffer: dims (37), stride (29), start offset 3.
            let dst = dev.htod_copy(&host).map_err(e)?;
            let column = Layout {
                dims: vec![37],
                stride: vec![29],
                start_offset: 3,
            };
            const_set(dev, &dst, &column, -4.0).map_err(e)?;
            let mut want = host.clone();
            for i in 0..column.elem_count() {
                want[column.offset(i)] = -4.0;
            }
            check(
                "const_set_f32 into column 3 (stride 29)",
                &dst.dtoh().map_err(e)?,
                &want,
            )?;
        }
        Err(err) => return Err(err.to_string()),
    }
    Ok(())
}

fn main() -> ExitCode {
    match Device::count() {
        Ok(0) => {
            println!(
                "no GPU: libhkb ({}) sees no device; nothing to run",
                hkb::platform()
            );
            return ExitCode::SUCCESS;
        }
        Err(err) if err.status() == hkb::sys::HKB_ERROR_NO_DEVICE => {
            println!("no GPU: {err}; nothing to run");
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            eprintln!("error: counting devices: {err}");
            return ExitCode::FAILURE;
        }
        Ok(_) => {}
    }
    let dev = match Device::new(0) {
        Ok(dev) => dev,
        Err(err) => {
            eprintln!("error: device 0: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("device 0: {} ({})", dev.target(), hkb::platform());
    match run(&dev) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("FAILED: {msg}");
            ExitCode::FAILURE
        }
    }
}
