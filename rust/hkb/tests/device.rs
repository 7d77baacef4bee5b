//! Tests that launch kernels. Each one skips, with a message on stderr, when the library sees no
//! device (or cannot count them); on a GPU machine a device that is counted but fails to open is
//! a failure. Expected values are exact: every input and result below is representable in f32, so
//! a fused or unfused multiply-add gives the same bits.

use std::io::Write;

use hkb::{sys, Device, DeviceBuffer, DevicePtr, LaunchArgs, LaunchConfig};

fn skip(why: &str) {
    // Written to the raw stderr handle: the test harness captures print!/eprint! of passing tests.
    let _ = writeln!(std::io::stderr(), "skipping device test: {why}");
}

fn device() -> Option<Device> {
    match Device::count() {
        Ok(0) => {
            skip(&format!("libhkb ({}) sees no device", hkb::platform()));
            None
        }
        Err(e) => {
            skip(&format!("counting devices failed: {e}"));
            None
        }
        Ok(_) => Some(Device::new(0).expect("device 0 is counted but does not open")),
    }
}

macro_rules! device_or_skip {
    () => {
        match device() {
            Some(d) => d,
            None => return,
        }
    };
}

/// `(x * mul + add)` for the affine tests' inputs, all exact in f32.
fn affine(x: f32, mul: f32, add: f32) -> f32 {
    x * mul + add
}

fn assert_same_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what}: element {i}: got {g}, want {w}"
        );
    }
}

#[test]
fn device_reports_ordinal_and_target() {
    let dev = device_or_skip!();
    assert_eq!(dev.ordinal(), 0);
    let prefix = match hkb::platform().as_str() {
        "amd" => "gfx",
        "nvidia" => "sm_",
        other => panic!("unknown platform {other:?}"),
    };
    assert!(
        dev.target().starts_with(prefix),
        "target {:?}",
        dev.target()
    );
}

#[test]
fn affine_f32_contiguous_with_for_num_elems() {
    let dev = device_or_skip!();
    let func = dev.get_func("affine_f32").unwrap();
    assert_eq!(func.name(), "affine_f32");
    assert_eq!(func.num_params(), 7);
    assert_eq!(func.param_sizes(), [8, 8, 8, 8, 8, 4, 4]);

    // 1025 elements: two blocks, the second with one live thread.
    affine_f32_contiguous(
        &func,
        1025,
        LaunchConfig::for_num_elems(1025),
        "for_num_elems",
    );
}

/// Runs affine_f32 over `n` contiguous elements (null info) with `cfg` and checks every output.
fn affine_f32_contiguous(func: &hkb::Function, n: usize, cfg: LaunchConfig, what: &str) {
    let dev = func.device();
    let x: Vec<f32> = (0..n).map(|i| (i % 4096) as f32 * 0.25 - 512.0).collect();
    let (mul, add) = (2.5f32, -1.0f32);
    let inp = dev.htod_copy(&x).unwrap();
    let out = dev.htod_copy(&vec![f32::NAN; n]).unwrap();

    let mut args = LaunchArgs::new();
    args.arg(&n)
        .arg(&1usize)
        .arg(&DevicePtr::NULL)
        .arg(&inp)
        .arg(&out)
        .arg(&mul)
        .arg(&add);
    // SAFETY: affine_f32 reads n floats of inp and writes n floats of out; both hold n.
    unsafe { func.launch(cfg, &args) }.unwrap();

    let want: Vec<f32> = x.iter().map(|&v| affine(v, mul, add)).collect();
    assert_same_bits(&out.dtoh().unwrap(), &want, what);
}

#[test]
fn affine_f32_with_the_tuned_config() {
    let dev = device_or_skip!();
    let func = dev.get_func("affine_f32").unwrap();
    // A block per 8192 f32 elements (two 16-byte packs a thread), at most 8192 blocks, past 1024
    // as rows of at most 1024.
    let all = LaunchConfig::tuned(&func, 1 << 40).unwrap();
    assert_eq!(all.block_dim, (1024, 1, 1));
    assert_eq!(all.grid_dim, (1024, 8, 1));
    assert_eq!(LaunchConfig::tuned(&func, 0).unwrap().grid_dim.0, 0);
    assert_eq!(LaunchConfig::tuned(&func, 8192).unwrap().grid_dim, (1, 1, 1));
    assert_eq!(LaunchConfig::tuned(&func, 8193).unwrap().grid_dim, (2, 1, 1));

    // Past 1024 blocks: a grid of two rows, every block of both busy.
    let n = 1025 * 8192 + 5;
    let cfg = LaunchConfig::tuned(&func, n as u64).unwrap();
    assert_eq!(cfg.grid_dim, (513, 2, 1));
    affine_f32_contiguous(&func, n, cfg, "tuned");

    // A kernel candle sizes from its shape has no element-count launch.
    let softmax = match dev.get_func("softmax_f32") {
        Ok(f) => f,
        Err(_) => return, // a library built without the reduce module
    };
    let e = LaunchConfig::tuned(&softmax, 10).unwrap_err();
    assert_eq!(e.status(), sys::HKB_ERROR_INVALID_ARGUMENT);
    assert!(e.message().contains("softmax_f32"), "{}", e.message());
}

#[test]
fn affine_f32_transposed_view_small_grid_on_a_stream() {
    let dev = device_or_skip!();
    let func = dev.get_func("affine_f32").unwrap();
    let stream = dev.new_stream().unwrap();

    // src holds a 40x33 row-major matrix starting at element 7; the view is its transpose,
    // dims (33, 40), strides (1, 33): view(i, j) = src[7 + i + 33 j].
    let (rows, cols, start) = (40usize, 33usize, 7usize);
    let n = rows * cols;
    let src: Vec<f32> = (0..start + n).map(|k| k as f32 - 500.0).collect();
    let info: Vec<usize> = vec![cols, rows, 1, cols];
    let (mul, add) = (0.5f32, 3.0f32);
    let src_dev = dev.htod_copy(&src).unwrap();
    let info_dev = dev.htod_copy(&info).unwrap();
    let out = dev.htod_copy(&vec![f32::NAN; n]).unwrap();

    // One block of 64 threads for 1320 elements: only a grid-stride loop covers them all.
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut builder = stream.launch_builder(&func);
    builder
        .arg(&n)
        .arg(&2usize)
        .arg(&info_dev)
        .arg(&src_dev.ptr_at(start))
        .arg(&out);
    builder.arg(&mul).arg(&add);
    // SAFETY: the view's largest offset is 7 + 32 + 33 * 39 < src.len(); out holds n floats.
    unsafe { builder.launch(cfg) }.unwrap();
    stream.synchronize().unwrap();

    let mut want = vec![0f32; n];
    for i in 0..cols {
        for j in 0..rows {
            want[i * rows + j] = affine(src[start + i + cols * j], mul, add);
        }
    }
    assert_same_bits(&out.dtoh().unwrap(), &want, "affine_f32 transposed");
}

#[test]
fn const_set_f32_into_a_strided_view() {
    let dev = device_or_skip!();
    let func = dev.get_func("const_set_f32").unwrap();

    // A 4x12 buffer; the view is 3 rows x 4 columns, every other column, from element 7:
    // offsets 7 + 12 r + 2 c.
    let poison = -7.0f32;
    let value = 1.5f32;
    let out = dev.htod_copy(&[poison; 48]).unwrap();
    let info = dev.htod_copy(&[3usize, 4, 12, 2]).unwrap();
    let numel = 12usize;
    let mut builder = func.builder();
    builder
        .arg(&numel)
        .arg(&2usize)
        .arg(&info)
        .arg(&value)
        .arg(&out.ptr_at(7));
    // SAFETY: the view's largest offset is 7 + 24 + 6 = 37 < 48.
    unsafe { builder.launch(LaunchConfig::for_num_elems(numel as u32)) }.unwrap();

    let mut want = vec![poison; 48];
    for r in 0..3 {
        for c in 0..4 {
            want[7 + 12 * r + 2 * c] = value;
        }
    }
    assert_same_bits(&out.dtoh().unwrap(), &want, "const_set_f32 strided");

    // Contiguous (null info), an odd size past one block; -0.0 must keep its sign.
    let n = 3001usize;
    let out = dev.htod_copy(&vec![f32::NAN; n]).unwrap();
    let mut args = LaunchArgs::new();
    args.arg(&n)
        .arg(&1usize)
        .arg(None::<&DeviceBuffer<usize>>)
        .arg(&-0.0f32)
        .arg(&out);
    // SAFETY: out holds n floats.
    unsafe { func.launch(LaunchConfig::for_num_elems(n as u32), &args) }.unwrap();
    assert_same_bits(
        &out.dtoh().unwrap(),
        &vec![-0.0f32; n],
        "const_set_f32 contiguous",
    );
}

#[test]
fn unknown_kernel_name_is_an_error_naming_it_and_its_neighbours() {
    let dev = device_or_skip!();
    let err = dev.get_func("affine_f33").unwrap_err();
    assert_eq!(err.status(), sys::HKB_ERROR_UNKNOWN_KERNEL, "{err}");
    assert!(err.message().contains("affine_f33"), "{err}");
    assert!(
        err.message().contains("affine_f32"),
        "nearest name missing: {err}"
    );

    let err = dev.get_func("affine\0f32").unwrap_err();
    assert_eq!(err.status(), sys::HKB_ERROR_INVALID_ARGUMENT, "{err}");
}

#[test]
fn wrong_argument_count_or_size_is_rejected_before_launch() {
    let dev = device_or_skip!();
    let func = dev.get_func("affine_f32").unwrap();
    let n = 16usize;
    let inp = dev.htod_copy(&vec![1.0f32; n]).unwrap();
    let out = dev.htod_copy(&vec![f32::NAN; n]).unwrap();
    let cfg = LaunchConfig::for_num_elems(n as u32);

    // Six arguments: `add` missing.
    let mut args = LaunchArgs::new();
    args.arg(&n)
        .arg(&1usize)
        .arg(&DevicePtr::NULL)
        .arg(&inp)
        .arg(&out)
        .arg(&2.0f32);
    // SAFETY: rejected before launch; were it launched, the buffers are large enough.
    let err = unsafe { func.launch(cfg, &args) }.unwrap_err();
    assert_eq!(err.status(), sys::HKB_ERROR_ARGUMENT_MISMATCH, "{err}");
    assert!(err.message().contains("affine_f32"), "{err}");

    // Eight arguments.
    args.arg(&3.0f32).arg(&4.0f32);
    let err = unsafe { func.launch(cfg, &args) }.unwrap_err();
    assert_eq!(err.status(), sys::HKB_ERROR_ARGUMENT_MISMATCH, "{err}");

    // Seven arguments, but numel as 4 bytes instead of size_t's 8.
    let mut args = LaunchArgs::new();
    args.arg(&(n as u32))
        .arg(&1usize)
        .arg(&DevicePtr::NULL)
        .arg(&inp)
        .arg(&out);
    args.arg(&2.0f32).arg(&3.0f32);
    let err = unsafe { func.launch(cfg, &args) }.unwrap_err();
    assert_eq!(err.status(), sys::HKB_ERROR_ARGUMENT_MISMATCH, "{err}");

    // mul as f64 where the kernel takes float.
    let mut args = LaunchArgs::new();
    args.arg(&n)
        .arg(&1usize)
        .arg(&DevicePtr::NULL)
        .arg(&inp)
        .arg(&out);
    args.arg(&2.0f64).arg(&3.0f32);
    let err = unsafe { func.launch(cfg, &args) }.unwrap_err();
    assert_eq!(err.status(), sys::HKB_ERROR_ARGUMENT_MISMATCH, "{err}");

    dev.synchronize().unwrap();
    assert!(
        out.dtoh().unwrap().iter().all(|v| v.is_nan()),
        "a rejected launch wrote output"
    );
}

#[test]
fn zero_sized_buffers_and_launches_do_nothing() {
    let dev = device_or_skip!();
    let func = dev.get_func("affine_f32").unwrap();

    let empty = dev.alloc::<f32>(0).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.dtoh().unwrap(), Vec::<f32>::new());
    let mut empty2 = dev.htod_copy::<f32>(&[]).unwrap();
    empty2.htod(&[]).unwrap();
    empty2.copy_from(&empty).unwrap();

    // for_num_elems(0): grid 0, the library launches nothing and succeeds.
    let n = 0usize;
    let cfg = LaunchConfig::for_num_elems(0);
    assert_eq!(cfg.grid_dim, (0, 1, 1));
    let mut args = LaunchArgs::new();
    args.arg(&n)
        .arg(&1usize)
        .arg(&DevicePtr::NULL)
        .arg(&empty)
        .arg(&empty2);
    args.arg(&2.0f32).arg(&1.0f32);
    // SAFETY: nothing is launched.
    unsafe { func.launch(cfg, &args) }.unwrap();

    // numel 0 with a real grid: the kernel itself must write nothing.
    let sentinel_in = dev.htod_copy(&[5.0f32]).unwrap();
    let sentinel_out = dev.htod_copy(&[-9.0f32]).unwrap();
    let mut args = LaunchArgs::new();
    args.arg(&n)
        .arg(&1usize)
        .arg(&DevicePtr::NULL)
        .arg(&sentinel_in)
        .arg(&sentinel_out);
    args.arg(&2.0f32).arg(&1.0f32);
    // SAFETY: numel 0 touches nothing; the buffers hold one element each regardless.
    unsafe { func.launch(LaunchConfig::for_num_elems(1), &args) }.unwrap();
    dev.synchronize().unwrap();
    assert_eq!(sentinel_out.dtoh().unwrap(), [-9.0]);
}

#[test]
fn function_handles_are_cached() {
    let dev = device_or_skip!();
    let a = dev.get_func("affine_f32").unwrap();
    let b = dev.get_func("affine_f32").unwrap();
    assert_eq!(a.raw(), b.raw());
    // The library caches per device too: a second Device of the same ordinal sees the same handle.
    let other = Device::new(0).unwrap();
    assert_eq!(other.raw(), dev.raw());
    assert_eq!(other.get_func("affine_f32").unwrap().raw(), a.raw());
    assert_ne!(dev.get_func("affine_f16").unwrap().raw(), a.raw());
}

#[test]
fn buffers_copy_both_ways_and_check_lengths() {
    let dev = device_or_skip!();
    let host: Vec<u8> = (0..1001u32).map(|i| (i * 7 % 256) as u8).collect();
    let a = dev.htod_copy(&host).unwrap();
    assert_eq!(a.len(), 1001);
    assert_eq!(a.dtoh().unwrap(), host);

    let mut b = dev.alloc_zeros::<u8>(1001).unwrap();
    assert!(b.dtoh().unwrap().iter().all(|&v| v == 0));
    b.copy_from(&a).unwrap();
    assert_eq!(dev.dtoh_sync_copy(&b).unwrap(), host);

    let mut back = vec![0u8; 1001];
    b.dtoh_into(&mut back).unwrap();
    assert_eq!(back, host);

    let err = b.htod(&host[..1000]).unwrap_err();
    assert_eq!(err.status(), sys::HKB_ERROR_INVALID_ARGUMENT);
    let err = b.dtoh_into(&mut back[..10]).unwrap_err();
    assert_eq!(err.status(), sys::HKB_ERROR_INVALID_ARGUMENT);
    let c = dev.alloc::<u8>(3).unwrap();
    assert_eq!(
        b.copy_from(&c).unwrap_err().status(),
        sys::HKB_ERROR_INVALID_ARGUMENT
    );

    let wide = dev.htod_copy(&[1u64, 2, 3, 4]).unwrap();
    let view = wide.slice(1..3);
    assert_eq!(view.len(), 2);
    assert_eq!(view.device_ptr().0, wide.device_ptr().0 + 8);
    assert_eq!(wide.ptr_at(4).0, wide.device_ptr().0 + 32);
}

#[test]
fn launches_from_several_threads() {
    let dev = device_or_skip!();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let dev = dev.clone();
            std::thread::spawn(move || {
                let func = dev.get_func("affine_f32").unwrap();
                let n = 4096 + t;
                let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
                let inp = dev.htod_copy(&x).unwrap();
                let out = dev.alloc::<f32>(n).unwrap();
                let mul = (t + 1) as f32;
                let mut builder = func.builder();
                builder
                    .arg(&n)
                    .arg(&1usize)
                    .arg(&DevicePtr::NULL)
                    .arg(&inp)
                    .arg(&out);
                builder.arg(&mul).arg(&0.0f32);
                // SAFETY: both buffers hold n floats.
                unsafe { builder.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
                let want: Vec<f32> = x.iter().map(|&v| v * mul).collect();
                assert_same_bits(&out.dtoh().unwrap(), &want, "threaded affine_f32");
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
