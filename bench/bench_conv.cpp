// CONV throughput under candle's launch geometry (for_num_elems over the outputs).
// - upsample_nearest2d: 8 x 64 x 128 x 128 -> 256 x 256 (x2 on both axes, scales 0.5 as candle's
//   host computes them), and f32 4 x 64 x 96 x 96 -> 288 x 288 (x3: scales that are no power of
//   two take the kernel's f64 path).
// - im2col: the conv2d default path for a 3x3 kernel, stride 1, padding 1 over 8 x 64 x 64 x 64
//   (dst 8 x 64 x 64 x 64 x 3 x 3), and a 7x7 kernel, stride 2, padding 3 over 2 x 3 x 224 x 224
//   (a network's stem).
// - im2col1d: the conv1d default path, 8 x 256 x 4096, kernel 3, padding 1.
// - max_pool2d / avg_pool2d: 8 x 64 x 128 x 128 (f32, bf16), kernel 2, stride 2, and a copy moving
//   the f32 pools' bytes.
// - upsample_bilinear2d: 8 x 64 x 128 x 128 -> 256 x 256 (f32, bf16), and f32 1 x 32 x 512 x 512
//   -> 1024 x 1024 (outputs wider than the kernel's tap tables), no align_corners, no factors.
// - conv_transpose2d: 8 x 64 x 32 x 32 -> 8 x 64 x 64 x 64, kernel 64 x 64 x 3 x 3, stride 2,
//   padding 1, output padding 1 (a decoder's 2x upsampling), f32 and bf16.
// - conv_transpose1d: 8 x 256 x 512 -> 8 x 256 x 1024, kernel 256 x 256 x 3, stride 2, padding 1,
//   output padding 1 (candle takes conv_transpose1d, not col2im1d, when padding is nonzero), f32
//   and bf16.
// Bytes: the output written plus the input read once (the transposed convolutions: and the
// kernel); these two are bound by arithmetic, so read their time (bench/torch_baseline.py times
// PyTorch's on the same shapes).
#include "bench_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

struct Image {
  size_t b, c, h, w;
  size_t numel() const { return b * c * h * w; }
  // candle's info for a contiguous (b, c, h, w) source: dims, then strides.
  std::vector<size_t> info() const { return {b, c, h, w, c * h * w, h * w, w, 1}; }
  std::string name() const {
    return std::to_string(b) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" +
           std::to_string(w);
  }
};

template <typename T>
struct Buffers {
  hkb::DeviceBuffer<T> src, dst;
};

template <typename T>
std::vector<Buffers<T>> conv_sets(const hkb::Device& dev, size_t src_len, size_t dst_len) {
  return bench::make_sets<Buffers<T>>(1.0 * (src_len + dst_len) * sizeof(T), [&] {
    Buffers<T> b{dev.alloc<T>(src_len), dev.alloc<T>(dst_len)};
    bench::fill(dev, b.src, 0x3C);
    return b;
  });
}

// A CONV kernel launched as candle launches it (for_num_elems over `threads`) on sources of
// `src_len` and outputs of `n` elements: `leading(args)` adds the kernel's scalar arguments, then
// info, src and dst follow. Bytes: the outputs written plus the sources read once.
template <typename T, typename Leading>
bench::Row conv_row(const hkb::Device& dev, const std::string& kernel, const std::string& label,
                    const std::vector<size_t>& info_host, size_t src_len, size_t n, size_t threads,
                    Leading&& leading) {
  const auto sets = conv_sets<T>(dev, src_len, n);
  auto info = dev.upload(info_host);
  const auto cfg = bench::candle_grid(threads);
  const hkb::Function fn = bench::function(dev, kernel);
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    leading(args);
    args.arg(info.ptr()).arg(sets[i].src.ptr()).arg(sets[i].dst.ptr());
    fn.launch(cfg, args);
  });
  return {kernel + " " + label, 1.0 * (n + src_len) * sizeof(T), s};
}

template <typename T>
bench::Row upsample_nearest_row(const hkb::Device& dev, const std::string& tag, Image in,
                                size_t factor) {
  const size_t ho = in.h * factor, wo = in.w * factor, n = in.b * in.c * ho * wo;
  const double w_scale = static_cast<double>(in.h) / static_cast<double>(ho);  // dims[2] / target
  const double h_scale = static_cast<double>(in.w) / static_cast<double>(wo);  // dims[3] / target
  return conv_row<T>(dev, "upsample_nearest2d_" + tag, in.name() + " x" + std::to_string(factor),
                     in.info(), in.numel(), n, n, [&](hkb::LaunchArgs& args) {
                       args.arg(ho).arg(wo).arg(w_scale).arg(h_scale);
                     });
}

template <typename T>
bench::Row im2col_row(const hkb::Device& dev, const std::string& tag, Image in, size_t k,
                      size_t stride, size_t padding) {
  const size_t dilation = 1;
  const size_t ho = (in.h + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
  const size_t wo = (in.w + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
  const size_t n = in.b * ho * wo * in.c * k * k;
  return conv_row<T>(
      dev, "im2col_" + tag,
      in.name() + " k" + std::to_string(k) + " s" + std::to_string(stride) + " p" +
          std::to_string(padding),
      in.info(), in.numel(), n, n, [&](hkb::LaunchArgs& args) {
        args.arg(n).arg(ho).arg(wo).arg(k).arg(k).arg(stride).arg(padding).arg(dilation);
      });
}

template <typename T>
bench::Row im2col1d_row(const hkb::Device& dev, const std::string& tag, size_t b, size_t c,
                        size_t l, size_t k, size_t padding) {
  const size_t l_out = l + 2 * padding - (k - 1);  // stride 1, dilation 1
  const size_t threads = b * l_out * c;
  return conv_row<T>(
      dev, "im2col1d_" + tag,
      std::to_string(b) + "x" + std::to_string(c) + "x" + std::to_string(l) + " k" +
          std::to_string(k) + " p" + std::to_string(padding),
      {b, c, l, c * l, l, 1}, b * c * l, threads * k, threads, [&](hkb::LaunchArgs& args) {
        args.arg(threads).arg(l_out).arg(k).arg(size_t{1}).arg(padding).arg(size_t{1});
      });
}

// max_pool2d / avg_pool2d with a square kernel k and stride k.
template <typename T>
bench::Row pool_row(const hkb::Device& dev, const std::string& op, const std::string& tag, Image in,
                    size_t k) {
  const size_t n = in.b * in.c * (in.h / k) * (in.w / k);
  return conv_row<T>(
      dev, op + "_pool2d_" + tag, in.name() + " k" + std::to_string(k) + " s" + std::to_string(k),
      in.info(), in.numel(), n, n,
      [&](hkb::LaunchArgs& args) { args.arg(in.numel()).arg(k).arg(k).arg(k).arg(k); });
}

template <typename T>
bench::Row upsample_bilinear_row(const hkb::Device& dev, const std::string& tag, Image in,
                                 size_t factor) {
  const size_t ho = in.h * factor, wo = in.w * factor, n = in.b * in.c * ho * wo;
  return conv_row<T>(dev, "upsample_bilinear2d_" + tag, in.name() + " x" + std::to_string(factor),
                     in.info(), in.numel(), n, n, [&](hkb::LaunchArgs& args) {
                       args.arg(wo).arg(ho).arg(false).arg(false).arg(0.0).arg(false).arg(0.0);
                     });
}

// conv_transpose1d (h == 0) or conv_transpose2d over a contiguous `in` and a contiguous kernel
// (c_in, c_out, k[, k]), dilation 1, under candle's grid over the outputs.
template <typename T>
bench::Row conv_transpose_row(const hkb::Device& dev, const std::string& tag, size_t b, size_t c_in,
                              size_t h, size_t w, size_t c_out, size_t k, size_t stride,
                              size_t padding, size_t out_padding) {
  const bool two_d = h != 0;
  const size_t hh = two_d ? h : 1, kh = two_d ? k : 1;
  const size_t ho = two_d ? (h - 1) * stride - 2 * padding + k + out_padding : 1;
  const size_t wo = (w - 1) * stride - 2 * padding + k + out_padding;
  const size_t src_len = b * c_in * hh * w, k_len = c_in * c_out * kh * k;
  const size_t n = b * c_out * ho * wo;
  std::vector<size_t> info;
  if (two_d) {
    info = {b,    c_in,  h, w, c_in * h * w,  h * w, w, 1,
            c_in, c_out, k, k, c_out * k * k, k * k, k, 1};
  } else {
    info = {b, c_in, w, c_in * w, w, 1, c_in, c_out, k, c_out * k, k, 1};
  }
  struct Set {
    hkb::DeviceBuffer<T> src, ker, dst;
  };
  const auto sets = bench::make_sets<Set>(1.0 * (src_len + k_len + n) * sizeof(T), [&] {
    Set st{dev.alloc<T>(src_len), dev.alloc<T>(k_len), dev.alloc<T>(n)};
    bench::fill(dev, st.src, 0x3C);
    bench::fill(dev, st.ker, 0x3C);
    return st;
  });
  auto d_info = dev.upload(info);
  const std::string kernel = (two_d ? "conv_transpose2d_" : "conv_transpose1d_") + tag;
  const hkb::Function fn = bench::function(dev, kernel);
  const auto cfg = bench::candle_grid(n);
  const size_t dilation = 1;
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(src_len);
    if (two_d) {
      args.arg(wo).arg(ho);
    } else {
      args.arg(wo);
    }
    args.arg(stride).arg(padding).arg(out_padding).arg(dilation).arg(d_info.ptr());
    args.arg(sets[i].src.ptr()).arg(sets[i].ker.ptr()).arg(sets[i].dst.ptr());
    fn.launch(cfg, args);
  });
  const std::string shape = std::to_string(b) + "x" + std::to_string(c_in) + "x" +
                            (two_d ? std::to_string(h) + "x" : "") + std::to_string(w);
  return {kernel + " " + shape + " k" + std::to_string(k) + " s" + std::to_string(stride) + " p" +
              std::to_string(padding) + " op" + std::to_string(out_padding),
          1.0 * (src_len + k_len + n) * sizeof(T), s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_conv", [](const hkb::Device& dev, bench::Report& report) {
    report.section("CONV");
    const Image feature{8, 64, 128, 128};
    report.add(upsample_nearest_row<float>(dev, "f32", feature, 2));
    report.add(upsample_nearest_row<hkb::bf16>(dev, "bf16", feature, 2));
    report.add(upsample_nearest_row<float>(dev, "f32", {4, 64, 96, 96}, 3));
    const Image square{8, 64, 64, 64};
    report.add(im2col_row<float>(dev, "f32", square, 3, 1, 1));
    report.add(im2col_row<hkb::bf16>(dev, "bf16", square, 3, 1, 1));
    report.add(im2col_row<float>(dev, "f32", {2, 3, 224, 224}, 7, 2, 3));
    report.add(im2col1d_row<float>(dev, "f32", 8, 256, 4096, 3, 1));
    report.add(pool_row<float>(dev, "max", "f32", feature, 2));
    report.add(pool_row<float>(dev, "avg", "f32", feature, 2));
    report.add(pool_row<hkb::bf16>(dev, "max", "bf16", feature, 2));
    report.add(pool_row<hkb::bf16>(dev, "avg", "bf16", feature, 2));
    // The pools move 40 MiB in about 20 us: a copy of that size is their nearer ceiling.
    report.add(bench::copy_row(dev, "max_pool2d_f32",
                               static_cast<double>(feature.numel() + feature.numel() / 4) * 4));
    report.add(upsample_bilinear_row<float>(dev, "f32", feature, 2));
    report.add(upsample_bilinear_row<hkb::bf16>(dev, "bf16", feature, 2));
    report.add(upsample_bilinear_row<float>(dev, "f32", {1, 32, 512, 512}, 2));
    report.add(conv_transpose_row<float>(dev, "f32", 8, 64, 32, 32, 64, 3, 2, 1, 1));
    report.add(conv_transpose_row<hkb::bf16>(dev, "bf16", 8, 64, 32, 32, 64, 3, 2, 1, 1));
    report.add(conv_transpose_row<float>(dev, "f32", 8, 256, 0, 512, 256, 3, 2, 1, 1));
    report.add(conv_transpose_row<hkb::bf16>(dev, "bf16", 8, 256, 0, 512, 256, 3, 2, 1, 1));
  });
}
