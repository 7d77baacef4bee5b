// CONV on the device against the float64 references of tests/reference/conv_ref.hpp, for every
// dtype of the module (bf16 f16 f32 f64 u8 u32): direct and transposed convolutions, im2col,
// im2col1d, col2im1d and pooling (upsampling: test_conv_upsample.cpp) with odd shapes (1x1
// kernels, stride above the kernel, padding at least the kernel, dilation, non-square, batch and
// channels above 1),
// channels-last, offset and batch-broadcast input views, non-contiguous conv kernels, NaN and
// -inf in max pooling, candle's launch geometry, a grid smaller than the work, empty launches and
// ~2^20-output cases. Outputs are poisoned with guard elements past the end that must survive.
#include "gpu/conv_test.hpp"
#include "gpu/conv_transpose_check.hpp"

namespace {

template <typename T>
class ConvTest : public GpuTest {};
TYPED_TEST_SUITE(ConvTest, ConvTypes);

// ---------------------------------------------------------------------------------------------
// Direct convolutions.

struct Conv1dCase {
  size_t b, c_in, l_in, c_out, k, stride, padding, dilation;
};
const std::vector<Conv1dCase> kConv1dCases = {
    {2, 3, 11, 4, 3, 1, 0, 1},  // plain
    {2, 5, 7, 3, 1, 1, 0, 1},   // 1x1 kernel
    {2, 3, 13, 2, 2, 3, 0, 1},  // stride above the kernel
    {1, 2, 9, 3, 2, 1, 3, 1},   // padding above the kernel
    {2, 3, 17, 4, 3, 2, 1, 2},  // dilation 2 with stride and padding
    {1, 4, 20, 2, 3, 1, 2, 3},  // dilation 3
};

template <typename T>
void check_conv1d(GpuTest& t, const Conv1dCase& p, Kind kind, bool kernel_permuted,
                  const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string("conv1d ") + kind_name(kind) + (kernel_permuted ? " k-perm " : " ") +
               "b" + std::to_string(p.b) + " cin" + std::to_string(p.c_in) + " l" +
               std::to_string(p.l_in) + " k" + std::to_string(p.k) + " s" +
               std::to_string(p.stride) + " p" + std::to_string(p.padding) + " d" +
               std::to_string(p.dilation) + ", " + t.seed_note());
  const Layout sl = make_layout({p.b, p.c_in, p.l_in}, kind);
  // The kernel (c_out, c_in, k), optionally stored as (c_in, k, c_out): candle only calls conv1d
  // for a non-contiguous kernel.
  Layout kl = Layout::contiguous({p.c_out, p.c_in, p.k});
  if (kernel_permuted) kl.strides = {1, p.k * p.c_out, p.c_out};
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const auto ker = random_values<T>(t.rng(), kl.storage_size());
  const size_t l_out = (p.l_in + 2 * p.padding - p.dilation * (p.k - 1) - 1) / p.stride + 1;
  const auto want =
      ref::conv1d(view4(src, sl), view4(ker, kl), l_out, p.stride, p.padding, p.dilation);
  auto d_src = t.device().upload(src);
  auto d_ker = t.device().upload(ker);
  auto d_info = t.device().upload(concat(sl.info(), kl.info()));
  const size_t n = p.b * p.c_out * l_out;
  const auto got = run<T>(t, "conv1d", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
    a.arg(sl.numel()).arg(l_out).arg(p.stride).arg(p.padding).arg(p.dilation);
    a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(d_ker.ptr()).arg(out);
  });
  expect_close(got, want, false);
}

TYPED_TEST(ConvTest, Conv1d) {
  for (const auto& p : kConv1dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv1d<TypeParam>(*this, p, kind, kind == Kind::ChannelsLast);
    }
  }
}

struct Conv2dCase {
  size_t b, c_in, h, w, c_out, hk, wk, stride, padding, dilation;
};
const std::vector<Conv2dCase> kConv2dCases = {
    {2, 3, 7, 9, 4, 3, 3, 1, 0, 1},    // non-square input
    {2, 4, 5, 6, 3, 1, 1, 1, 0, 1},    // 1x1 kernel
    {1, 2, 11, 9, 3, 2, 2, 3, 0, 1},   // stride above the kernel
    {2, 2, 5, 4, 2, 2, 3, 1, 3, 1},    // padding at least the kernel, non-square kernel
    {1, 3, 12, 10, 2, 3, 2, 2, 1, 2},  // dilation 2
};

template <typename T>
void check_conv2d(GpuTest& t, const Conv2dCase& p, Kind kind, bool kernel_permuted,
                  const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string("conv2d ") + kind_name(kind) + " b" + std::to_string(p.b) + " cin" +
               std::to_string(p.c_in) + " " + std::to_string(p.h) + "x" + std::to_string(p.w) +
               " k" + std::to_string(p.hk) + "x" + std::to_string(p.wk) + " s" +
               std::to_string(p.stride) + " p" + std::to_string(p.padding) + " d" +
               std::to_string(p.dilation) + ", " + t.seed_note());
  const Layout sl = make_layout({p.b, p.c_in, p.h, p.w}, kind);
  Layout kl = Layout::contiguous({p.c_out, p.c_in, p.hk, p.wk});
  if (kernel_permuted) kl = make_layout({p.c_out, p.c_in, p.hk, p.wk}, Kind::ChannelsLast);
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const auto ker = random_values<T>(t.rng(), kl.storage_size());
  const size_t h_out = (p.h + 2 * p.padding - p.dilation * (p.hk - 1) - 1) / p.stride + 1;
  const size_t w_out = (p.w + 2 * p.padding - p.dilation * (p.wk - 1) - 1) / p.stride + 1;
  const auto want =
      ref::conv2d(view4(src, sl), view4(ker, kl), h_out, w_out, p.stride, p.padding, p.dilation);
  auto d_src = t.device().upload(src);
  auto d_ker = t.device().upload(ker);
  auto d_info = t.device().upload(concat(sl.info(), kl.info()));
  const size_t n = p.b * p.c_out * h_out * w_out;
  const auto got = run<T>(t, "conv2d", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
    a.arg(sl.numel()).arg(w_out).arg(h_out).arg(p.stride).arg(p.padding).arg(p.dilation);
    a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(d_ker.ptr()).arg(out);
  });
  expect_close(got, want, false);
}

TYPED_TEST(ConvTest, Conv2d) {
  for (const auto& p : kConv2dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv2d<TypeParam>(*this, p, kind, kind != Kind::Contiguous);
    }
  }
}

TYPED_TEST(ConvTest, ConvTranspose1d) {
  for (const auto& p : kConvT1dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv_transpose1d<TypeParam>(*this, p, kind);
    }
  }
}

TYPED_TEST(ConvTest, ConvTranspose2d) {
  for (const auto& p : kConvT2dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv_transpose2d<TypeParam>(*this, p, kind, kind == Kind::OffsetBroadcast);
    }
  }
}

// The tiles of the transposed convolutions (kernels/conv/transpose_tiles.h; f32, f16 and bf16 at
// dilation 1, stride up to 4; the other dtypes and strides run the same cases on the direct path):
// strides 1 to 3 and 4 and 5 above the kernel (phases without taps write zeros; 5 is past the
// tiles), padding and output padding, channel counts that are no multiple of the 16-channel chunk
// or the 64-channel tile (3, 17, 70), more positions than one tile, batch above 1,
// channels-last, offset+broadcast inputs and non-contiguous kernels, under candle's grid and grids
// of other shapes: fewer blocks than tiles, blocks that are no multiple of 16 threads (90: 5
// thread columns, 10 threads without a register tile) and of fewer than 16 (direct path).
const std::vector<ConvT1dCase> kConvT1dTileCases = {
    {2, 17, 40, 70, 3, 2, 1, 1, 1},   // the benchmark's taps, partial chunk and channel tiles
    {3, 3, 100, 5, 5, 3, 2, 0, 1},    // stride 3, few channels
    {1, 70, 300, 17, 4, 1, 2, 0, 1},  // stride 1: 303 positions, two position tiles
    {2, 16, 9, 64, 2, 4, 0, 3, 1},    // stride 4 above the kernel: phases 2 and 3 have no tap
    {1, 4, 6, 3, 3, 5, 1, 0, 1},      // stride 5: the direct path
};
const std::vector<ConvT2dCase> kConvT2dTileCases = {
    {2, 17, 9, 11, 70, 3, 3, 2, 1, 1, 1},   // the benchmark's taps, partial chunk and tiles
    {1, 3, 7, 6, 3, 3, 3, 1, 1, 0, 1},      // stride 1, padding 1 ("same")
    {2, 20, 5, 7, 17, 4, 3, 3, 2, 2, 1},    // stride 3, non-square kernel, output padding 2
    {1, 33, 6, 5, 5, 2, 2, 3, 0, 0, 1},     // stride 3 above the kernel: phases without taps
    {3, 16, 12, 12, 64, 3, 3, 2, 0, 0, 1},  // whole chunks and tiles, two position tiles a phase
};

std::vector<hkb::LaunchConfig> tile_grids() {
  return {hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1), hkb::LaunchConfig::make(2, 1, 1, 90, 1, 1),
          hkb::LaunchConfig::make(1, 1, 1, 1024, 1, 1), hkb::LaunchConfig::make(5, 1, 1, 8, 1, 1)};
}

TYPED_TEST(ConvTest, ConvTranspose1dTiles) {
  const auto grids = tile_grids();
  for (const auto& p : kConvT1dTileCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv_transpose1d<TypeParam>(*this, p, kind, kind != Kind::Contiguous);
    }
    for (const auto& grid : grids) {
      check_conv_transpose1d<TypeParam>(*this, p, Kind::ChannelsLast, true, &grid);
    }
  }
}

TYPED_TEST(ConvTest, ConvTranspose2dTiles) {
  const auto grids = tile_grids();
  for (const auto& p : kConvT2dTileCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv_transpose2d<TypeParam>(*this, p, kind, kind != Kind::Contiguous);
    }
    for (const auto& grid : grids) {
      check_conv_transpose2d<TypeParam>(*this, p, Kind::OffsetBroadcast, true, &grid);
    }
  }
}

// NaN and infinities in the input reach the outputs that sum them, on the tiles (every tile case)
// and the direct path (the first cases), under candle's grid and a grid smaller than the work.
TYPED_TEST(ConvTest, ConvTransposeSpecialValues) {
  if constexpr (!ref::is_float_v<TypeParam>) {
    GTEST_SKIP() << "integers have no special values";
  } else {
    const auto small = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
    for (const auto& p : kConvT1dTileCases) {
      check_conv_transpose1d<TypeParam>(*this, p, Kind::Contiguous, false, nullptr, true);
      check_conv_transpose1d<TypeParam>(*this, p, Kind::ChannelsLast, true, &small, true);
    }
    check_conv_transpose1d<TypeParam>(*this, kConvT1dCases[1], Kind::Contiguous, false, nullptr,
                                      true);
    for (const auto& p : kConvT2dTileCases) {
      check_conv_transpose2d<TypeParam>(*this, p, Kind::Contiguous, false, nullptr, true);
      check_conv_transpose2d<TypeParam>(*this, p, Kind::OffsetBroadcast, true, &small, true);
    }
    check_conv_transpose2d<TypeParam>(*this, kConvT2dCases[3], Kind::Contiguous, false, nullptr,
                                      true);
  }
}

// The benchmark's shapes, smaller, under candle's grid: 2-D at a quarter of its batch and half its
// plane (2 x 64 x 16 x 16, 3x3, stride 2, no padding: 139392 outputs in 11 tiles) and 1-D at half
// the batch and a quarter of the length (4 x 256 x 128, k 3, stride 2: 20 tiles).
TYPED_TEST(ConvTest, ConvTransposeTilesLarge) {
  if (sizeof(TypeParam) != 4 && sizeof(TypeParam) != 2) {
    GTEST_SKIP() << "covered by the 2- and 4-byte types";
  }
  check_conv_transpose2d<TypeParam>(*this, {2, 64, 16, 16, 64, 3, 3, 2, 0, 0, 1}, Kind::Contiguous,
                                    false);
  check_conv_transpose1d<TypeParam>(*this, {4, 256, 128, 256, 3, 2, 0, 0, 1}, Kind::Contiguous);
}

// ---------------------------------------------------------------------------------------------
// im2col / col2im.

struct Im2colCase {
  size_t b, c, h, w, hk, wk, stride, padding, dilation;
};
const std::vector<Im2colCase> kIm2colCases = {
    {2, 3, 7, 9, 3, 3, 1, 0, 1},    // non-square
    {1, 5, 4, 6, 1, 1, 1, 0, 1},    // 1x1 kernel
    {2, 2, 11, 9, 2, 2, 3, 0, 1},   // stride above the kernel
    {1, 3, 5, 4, 2, 3, 1, 3, 1},    // padding at least the kernel
    {2, 3, 12, 10, 3, 2, 2, 1, 2},  // dilation 2
    {1, 1, 3, 3, 3, 3, 1, 1, 1},    // one channel, same padding: 81 outputs (not a multiple of 16)
    {3, 4, 9, 7, 3, 3, 1, 1, 1},    // c_in * 9 = 36 outputs a position: whole packs of 4 values
};

template <typename T>
void check_im2col(GpuTest& t, const Im2colCase& p, Kind kind,
                  const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string("im2col ") + kind_name(kind) + " b" + std::to_string(p.b) + " c" +
               std::to_string(p.c) + " " + std::to_string(p.h) + "x" + std::to_string(p.w) + " k" +
               std::to_string(p.hk) + "x" + std::to_string(p.wk) + " s" + std::to_string(p.stride) +
               " p" + std::to_string(p.padding) + " d" + std::to_string(p.dilation) + ", " +
               t.seed_note());
  const Layout sl = make_layout({p.b, p.c, p.h, p.w}, kind);
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const size_t h_out = (p.h + 2 * p.padding - p.dilation * (p.hk - 1) - 1) / p.stride + 1;
  const size_t w_out = (p.w + 2 * p.padding - p.dilation * (p.wk - 1) - 1) / p.stride + 1;
  const auto want =
      ref::im2col(view4(src, sl), h_out, w_out, p.hk, p.wk, p.stride, p.padding, p.dilation);
  auto d_src = t.device().upload(src);
  auto d_info = t.device().upload(sl.info());
  const size_t n = p.b * h_out * w_out * p.c * p.hk * p.wk;
  ASSERT_EQ(n, want.value.size());
  const auto got = run<T>(t, "im2col", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
    a.arg(n).arg(h_out).arg(w_out).arg(p.hk).arg(p.wk).arg(p.stride).arg(p.padding);
    a.arg(p.dilation).arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(out);
  });
  expect_close(got, want, true);
}

TYPED_TEST(ConvTest, Im2col) {
  for (const auto& p : kIm2colCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_im2col<TypeParam>(*this, p, kind);
    }
  }
}

// ~2^20 outputs (2 x 40 x 40 x 32 x 3 x 3 = 921600) through the 16-byte stores.
TYPED_TEST(ConvTest, Im2colLarge) {
  if (sizeof(TypeParam) != 4) GTEST_SKIP() << "covered by the 4-byte types";
  check_im2col<TypeParam>(*this, {2, 32, 40, 40, 3, 3, 1, 1, 1}, Kind::Contiguous);
  check_im2col<TypeParam>(*this, {2, 32, 40, 40, 3, 3, 1, 1, 1}, Kind::ChannelsLast);
}

// The row tiles (kernels/conv.hip, im2col_rows): launches with at least 16384 outputs a busy block,
// here under grids of one, two and three blocks (so every block takes several units, and the last
// units are partial: fewer rows than R, fewer channels than C). Runs of 4-output stores (c_in *
// h_k * w_k a multiple of 4) and of single outputs (odd), 1x1 and non-square kernels, stride 2
// and 3, dilation 2, padding above the kernel, channels-last and offset sources.
const std::vector<Im2colCase> kIm2colRowCases = {
    {2, 16, 33, 35, 3, 3, 1, 1, 1},  // 144 taps a position: 4-output stores
    {3, 7, 20, 23, 3, 3, 1, 1, 1},   // 63 taps a position: single outputs
    {2, 12, 40, 31, 3, 2, 2, 3, 2},  // non-square kernel, stride 2, dilation 2, padding 3
    {1, 40, 24, 24, 1, 1, 1, 0, 1},  // 1x1 kernel
    {2, 5, 30, 28, 5, 5, 3, 5, 1},   // stride 3, padding 5: 125 taps a position
    {1, 3, 64, 64, 7, 7, 2, 3, 1},   // a stem: 7x7 stride 2 on 3 channels
};

TYPED_TEST(ConvTest, Im2colRowTiles) {
  using T = TypeParam;
  for (const auto& grid :
       {hkb::LaunchConfig::make(1, 1, 1, 1024, 1, 1), hkb::LaunchConfig::make(2, 1, 1, 256, 1, 1),
        hkb::LaunchConfig::make(3, 1, 1, 1024, 1, 1)}) {
    for (const auto& p : kIm2colRowCases) {
      for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
        check_im2col<T>(*this, p, kind, &grid);
      }
    }
  }
}

// The row tiles under candle's grid: 4.7M outputs, at least 16384 for each busy block (two a
// multiprocessor) of any GPU up to 144 multiprocessors (the H100 has 132).
TYPED_TEST(ConvTest, Im2colRowTilesLarge) {
  if (sizeof(TypeParam) != 4 && sizeof(TypeParam) != 2) {
    GTEST_SKIP() << "covered by the 2- and 4-byte types";
  }
  check_im2col<TypeParam>(*this, {4, 32, 64, 64, 3, 3, 1, 1, 1}, Kind::Contiguous);
  check_im2col<TypeParam>(*this, {4, 33, 62, 66, 3, 3, 1, 1, 1}, Kind::ChannelsLast);
}

// Past the tap table (kernels/conv.hip, im2col_taps: launches too small for the row tiles), output
// by output instead:
// 33 x 33 = 1089 taps, and a tap row offset of 70000 (at least 2^16).
TYPED_TEST(ConvTest, Im2colPastTheTapTable) {
  check_im2col<TypeParam>(*this, {1, 2, 40, 40, 33, 33, 1, 2, 1}, Kind::Contiguous);
  check_im2col<TypeParam>(*this, {1, 1, 1, 3, 2, 1, 1, 35000, 70000}, Kind::Contiguous);
}

struct Im2col1dCase {
  size_t b, c, l, k, stride, padding, dilation;
};
const std::vector<Im2col1dCase> kIm2col1dCases = {
    {2, 3, 11, 3, 1, 0, 1},
    {1, 4, 7, 1, 1, 0, 1},
    {2, 2, 13, 2, 3, 0, 1},
    {1, 3, 5, 2, 1, 3, 1},
    {2, 3, 17, 3, 2, 1, 2},
    // tiles of 32 positions x 32 channels (kernels/conv/col1d.h): partial tiles in both dims,
    // stride and dilation, one channel, five taps, and a window past the tile's (row by row)
    {2, 37, 70, 3, 1, 1, 1},
    {1, 64, 100, 4, 2, 1, 1},
    {3, 1, 300, 3, 1, 1, 2},
    {1, 33, 40, 5, 1, 2, 1},
    {1, 3, 300, 3, 5, 1, 1},
};

TYPED_TEST(ConvTest, Im2col1d) {
  using T = TypeParam;
  for (const auto& p : kIm2col1dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      SCOPED_TRACE(std::string("im2col1d ") + kind_name(kind) + " l" + std::to_string(p.l) + " k" +
                   std::to_string(p.k) + " s" + std::to_string(p.stride) + " p" +
                   std::to_string(p.padding) + " d" + std::to_string(p.dilation) + ", " +
                   this->seed_note());
      const Layout sl = make_layout({p.b, p.c, p.l}, kind);
      const auto src = random_values<T>(this->rng(), sl.storage_size());
      const size_t l_out = (p.l + 2 * p.padding - p.dilation * (p.k - 1) - 1) / p.stride + 1;
      const auto want = ref::im2col1d(view4(src, sl), l_out, p.k, p.stride, p.padding, p.dilation);
      auto d_src = this->device().upload(src);
      auto d_info = this->device().upload(sl.info());
      const size_t rows = p.b * l_out * p.c;  // candle passes (and launches over) the row count
      const auto small = hkb::LaunchConfig::make(2, 1, 1, 96, 1, 1);  // blocks loop over tiles
      for (const hkb::LaunchConfig* cfg :
           {static_cast<const hkb::LaunchConfig*>(nullptr), &small}) {
        const auto got = run<T>(
            *this, "im2col1d", rows * p.k, rows, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
              a.arg(rows).arg(l_out).arg(p.k).arg(p.stride).arg(p.padding).arg(p.dilation);
              a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(out);
            });
        expect_close(got, want, true);
      }
    }
  }
}

struct Col2imCase {
  size_t b, l_in, c_out, k, stride;
};

TYPED_TEST(ConvTest, Col2im1d) {
  using T = TypeParam;
  const std::vector<Col2imCase> cases = {
      {2, 5, 3, 3, 1},  // overlapping taps
      {1, 7, 2, 4, 2},  // stride below the kernel
      {2, 4, 3, 2, 3},  // stride above the kernel: gaps stay 0
      {1, 6, 1, 1, 1},  // 1-tap kernel: a transpose
      {3, 9, 4, 5, 2},
  };
  for (const auto& p : cases) {
    SCOPED_TRACE("col2im1d b" + std::to_string(p.b) + " l_in" + std::to_string(p.l_in) + " c" +
                 std::to_string(p.c_out) + " k" + std::to_string(p.k) + " s" +
                 std::to_string(p.stride) + ", " + this->seed_note());
    const size_t l_out = (p.l_in - 1) * p.stride + p.k;
    const auto col = random_values<T>(this->rng(), p.b * p.l_in * p.c_out * p.k);
    const auto want = ref::col2im1d(col, p.b, p.l_in, p.c_out, p.k, p.stride);
    auto d_col = this->device().upload(col);
    const size_t n = p.b * p.c_out * l_out;
    const auto got = run<
        T>(*this, "col2im1d", n, n, nullptr, [&](hkb::LaunchArgs& a, hkb_devptr out) {
      a.arg(n).arg(l_out).arg(p.l_in).arg(p.c_out).arg(p.k).arg(p.stride).arg(d_col.ptr()).arg(out);
    });
    expect_close(got, want, false);
  }
}

// ---------------------------------------------------------------------------------------------
// Pooling. wk/ws pool dims[2], hk/hs dims[3].

struct PoolCase {
  size_t b, c, d2, d3, wk, hk, ws, hs;
};
const std::vector<PoolCase> kPoolCases = {
    {2, 3, 7, 9, 2, 2, 2, 2},   // non-square input, odd sizes (last row/col dropped)
    {1, 2, 8, 5, 3, 2, 1, 2},   // overlapping windows along dims[2], non-square window
    {2, 2, 9, 11, 2, 3, 3, 4},  // stride above the kernel
    {1, 1, 5, 5, 1, 1, 1, 1},   // 1x1: a copy
    {1, 3, 6, 4, 6, 4, 1, 1},   // the whole plane
    {2, 2, 6, 7, 2, 2, 1, 1},   // overlapping 2x2 windows along both dims, odd width
    {2, 3, 6, 8, 2, 2, 2, 2},   // rows of 8: contiguous, several outputs a unit by vector loads
    {2, 3, 7, 16, 2, 2, 3, 2},  // the same with an odd row count and 3 rows a step
};

template <typename T>
void check_pool_layout(GpuTest& t, bool max, const PoolCase& p, const Layout& sl,
                       const std::vector<T>* values, const hkb::LaunchConfig* cfg = nullptr) {
  const auto src = values ? *values : random_values<T>(t.rng(), sl.storage_size());
  ASSERT_GE(src.size(), sl.storage_size());
  const auto want = max ? ref::max_pool2d(view4(src, sl), p.wk, p.hk, p.ws, p.hs)
                        : ref::avg_pool2d(view4(src, sl), p.wk, p.hk, p.ws, p.hs);
  auto d_src = t.device().upload(src);
  auto d_info = t.device().upload(sl.info());
  const size_t n = want.value.size();
  const auto got = run<T>(t, max ? "max_pool2d" : "avg_pool2d", n, n, cfg,
                          [&](hkb::LaunchArgs& a, hkb_devptr out) {
                            a.arg(sl.numel()).arg(p.wk).arg(p.hk).arg(p.ws).arg(p.hs);
                            a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(out);
                          });
  expect_close(got, want, max);
}
template <typename T>
void check_pool(GpuTest& t, bool max, const PoolCase& p, Kind kind, const std::vector<T>* values,
                const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string(max ? "max_pool2d " : "avg_pool2d ") + kind_name(kind) + " " +
               std::to_string(p.d2) + "x" + std::to_string(p.d3) + " k" + std::to_string(p.wk) +
               "x" + std::to_string(p.hk) + " s" + std::to_string(p.ws) + "x" +
               std::to_string(p.hs) + ", " + t.seed_note());
  check_pool_layout<T>(t, max, p, make_layout({p.b, p.c, p.d2, p.d3}, kind), values, cfg);
}

TYPED_TEST(ConvTest, AvgPool2d) {
  for (const auto& p : kPoolCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_pool<TypeParam>(*this, false, p, kind, nullptr);
    }
  }
}

TYPED_TEST(ConvTest, MaxPool2d) {
  for (const auto& p : kPoolCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_pool<TypeParam>(*this, true, p, kind, nullptr);
    }
  }
}

// Under candle's grid of an output a thread, more outputs than the threads the resident blocks
// hold (their loop takes several steps of kPoolBatch outputs), strided input included.
TYPED_TEST(ConvTest, Pool2dLargeUnderCandleGrid) {
  using T = TypeParam;
  check_pool<T>(*this, true, {2, 16, 512, 250, 2, 2, 2, 2}, Kind::Contiguous, nullptr);
  check_pool<T>(*this, false, {2, 16, 512, 250, 2, 2, 2, 2}, Kind::ChannelsLast, nullptr);
  // Rows of 256: several outputs a unit, the resident blocks' last step partly past the end.
  check_pool<T>(*this, true, {2, 16, 512, 256, 2, 2, 2, 2}, Kind::Contiguous, nullptr);
}

// 2 x 2 windows of stride 2 along rows of 16, 32 and 6 values, a batch broadcast (stride 0) from
// 16 or 6 values into the buffer: rows of 16 or 32 from 16 values in keep every unit's loads
// aligned (several outputs a unit); from 6 values in, or over rows of 6, an output a unit.
TYPED_TEST(ConvTest, Pool2dUnitsAndTheirAlignment) {
  using T = TypeParam;
  for (const PoolCase p : {PoolCase{2, 3, 6, 16, 2, 2, 2, 2}, PoolCase{3, 2, 5, 32, 2, 2, 1, 2},
                           PoolCase{2, 2, 4, 6, 2, 2, 2, 2}}) {
    for (size_t offset : {16, 6}) {
      Layout l = make_layout({p.b, p.c, p.d2, p.d3}, Kind::Contiguous);
      l.strides[0] = 0;
      l.offset = offset;
      for (bool max : {true, false}) {
        SCOPED_TRACE(std::string(max ? "max_pool2d " : "avg_pool2d ") + std::to_string(p.d2) + "x" +
                     std::to_string(p.d3) + " offset " + std::to_string(offset) + ", " +
                     this->seed_note());
        check_pool_layout<T>(*this, max, p, l, nullptr);
      }
    }
  }
}

// 2 x 2 windows of stride 2 where batch, channel and output row may or may not step through the
// source evenly (the pools then index a row of outputs at once, or each dim apart): one channel,
// a batch of one with an odd stride, channel planes padded, a padded batch (the padded ones even
// only where a plane has one row of windows); rows of 8 (several outputs a unit) and 6 (one).
TYPED_TEST(ConvTest, Pool2dRowsIndexedAtOnce) {
  using T = TypeParam;
  struct Case {
    size_t b, c, d2, pad0, pad1, batch_stride;  // pads of the batch / channel; 0 or the batch's
  };
  const std::vector<Case> cases = {{3, 1, 6, 0, 0, 0},  {1, 3, 6, 0, 0, 5},  {1, 3, 6, 0, 0, 1000},
                                   {2, 3, 6, 0, 8, 0},  {2, 3, 2, 0, 8, 0},  {2, 3, 3, 0, 8, 0},
                                   {2, 3, 6, 16, 0, 0}, {2, 1, 6, 16, 0, 0}, {2, 1, 2, 16, 0, 0}};
  for (const Case& k : cases) {
    for (size_t d3 : {8, 6}) {
      Layout l = Layout::contiguous({k.b, k.c, k.d2, d3});
      l.strides[1] += k.pad1;
      l.strides[0] = k.batch_stride != 0 ? k.batch_stride : l.strides[1] * k.c + k.pad0;
      for (bool max : {true, false}) {
        SCOPED_TRACE(std::string(max ? "max_pool2d " : "avg_pool2d ") + std::to_string(k.b) + "x" +
                     std::to_string(k.c) + "x" + std::to_string(k.d2) + "x" + std::to_string(d3) +
                     " strides " + std::to_string(l.strides[0]) + "," +
                     std::to_string(l.strides[1]) + ", " + this->seed_note());
        check_pool_layout<T>(*this, max, {k.b, k.c, k.d2, d3, 2, 2, 2, 2}, l, nullptr);
      }
    }
  }
}

// 2x2 windows of a 4x4 plane: all NaN; NaN with numbers; all -inf; -inf with numbers. f32/f64
// skip NaN, f16/bf16 propagate it (the reference encodes both). Plus +inf, -0.0 and the extremes
// through the overlapping 3x3 windows of a second run. The same values as a 2x8 plane go through
// the 2x2 pools' units of adjacent outputs (a row of 8 holds whole units for every type but f64).
TYPED_TEST(ConvTest, MaxPool2dSpecialValues) {
  using T = TypeParam;
  if constexpr (!ref::is_float_v<T>) {
    const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const std::vector<T> v = {lo, lo, hi, 1, lo, lo, 0, 2, 7, hi, lo, lo, 3, 5, lo, 1};
    check_pool<T>(*this, true, {1, 1, 4, 4, 2, 2, 2, 2}, Kind::Contiguous, &v);
    check_pool<T>(*this, true, {1, 1, 2, 8, 2, 2, 2, 2}, Kind::Contiguous, &v);
  } else {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // clang-format off
    const std::vector<double> d = {
        nan,  nan,  nan, 1.5,
        nan,  nan,  nan, -3.0,
        -inf, -inf, -inf, -2.0,
        -inf, -inf, -inf, -inf};
    // clang-format on
    std::vector<T> v;
    for (double x : d) v.push_back(ref::from_double<T>(x));
    check_pool<T>(*this, true, {1, 1, 4, 4, 2, 2, 2, 2}, Kind::Contiguous, &v);
    std::vector<T> w;
    const auto specials = gpu_test::special_values<T>();
    for (size_t i = 0; i < 25; ++i) w.push_back(ref::from_double<T>(specials[i % specials.size()]));
    check_pool<T>(*this, true, {1, 1, 5, 5, 3, 3, 1, 1}, Kind::Contiguous, &w);
    check_pool<T>(*this, false, {1, 1, 4, 4, 2, 2, 2, 2}, Kind::Contiguous, &v);
    for (bool max : {true, false}) {
      check_pool<T>(*this, max, {1, 1, 2, 8, 2, 2, 2, 2}, Kind::Contiguous, &v);
      check_pool<T>(*this, max, {1, 1, 2, 8, 2, 2, 2, 2}, Kind::Contiguous, &w);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Geometry: a grid much smaller than the work (grid-stride loops), and empty launches.

TYPED_TEST(ConvTest, GridSmallerThanWork) {
  using T = TypeParam;
  const auto cfg = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  check_conv1d<T>(*this, kConv1dCases[4], Kind::ChannelsLast, true, &cfg);
  check_conv2d<T>(*this, kConv2dCases[0], Kind::ChannelsLast, true, &cfg);
  check_conv_transpose2d<T>(*this, kConvT2dCases[1], Kind::Contiguous, false, &cfg);
  check_im2col<T>(*this, {2, 8, 17, 19, 3, 3, 1, 1, 1}, Kind::Contiguous, &cfg);
  check_pool<T>(*this, false, {2, 3, 17, 19, 2, 3, 2, 1}, Kind::Contiguous, nullptr, &cfg);
  check_pool<T>(*this, true, {2, 3, 17, 19, 2, 3, 2, 1}, Kind::ChannelsLast, nullptr, &cfg);
}

// Grids that cover the outputs with blocks other than candle's 1024 threads (90: block ranges that
// end inside a 16-byte unit; 30: less than a wave; 256 with spare blocks), for the kernels that
// give each block its own range of outputs.
TYPED_TEST(ConvTest, CoveringGrids) {
  using T = TypeParam;
  for (const uint32_t block : {90u, 30u, 256u}) {
    const uint32_t extra = block == 256 ? 5 : 0;
    auto cover = [&](size_t n) {
      return hkb::LaunchConfig::make(static_cast<uint32_t>((n + block - 1) / block) + extra, 1, 1,
                                     block, 1, 1);
    };
    const auto a = cover(2 * 8 * 17 * 19 * 9);
    check_im2col<T>(*this, {2, 8, 17, 19, 3, 3, 1, 1, 1}, Kind::Contiguous, &a);
    const auto b = cover(2 * 3 * 7 * 9 * 9);  // c_in * 3 * 3 = 27: units span two positions
    check_im2col<T>(*this, {2, 3, 7, 9, 3, 3, 1, 0, 1}, Kind::ChannelsLast, &b);
  }
}

// An empty batch writes nothing (the guard stays poison) under a one-block grid.
TYPED_TEST(ConvTest, EmptyBatchWritesNothing) {
  using T = TypeParam;
  const auto cfg = hkb::LaunchConfig::make(1, 1, 1, 256, 1, 1);
  check_im2col<T>(*this, {0, 3, 5, 5, 3, 3, 1, 1, 1}, Kind::Contiguous, &cfg);
  check_pool<T>(*this, false, {0, 2, 4, 4, 2, 2, 2, 2}, Kind::Contiguous, nullptr, &cfg);
  check_conv2d<T>(*this, {0, 2, 5, 5, 2, 3, 3, 1, 0, 1}, Kind::Contiguous, false, &cfg);
  check_conv_transpose2d<T>(*this, {0, 3, 4, 4, 2, 3, 3, 2, 1, 1, 1}, Kind::Contiguous, false,
                            &cfg);
  check_conv_transpose1d<T>(*this, {0, 3, 6, 2, 3, 2, 1, 1, 1}, Kind::Contiguous, false, &cfg);
}

}  // namespace
