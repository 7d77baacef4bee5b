// avg_pool2d and max_pool2d: the resident grid's threads loop over the outputs.
#pragma once

#include "common.h"

namespace {

// Pooling. info = [dims(4), strides(4)]; "w" pools dims[2], "h" pools dims[3].

// The 2-byte floats' maximum on widened values: whether b replaces a (the first NaN, else the
// larger, a on ties), one select where early returns made two branches a combination.
HKB_DEVICE bool takes_second(float fa, float fb) {
  return fa == fa && !(fb <= fa);
}

template <typename T>
HKB_DEVICE T max_of(T a, T b) {
  if constexpr (std::is_same<T, float>::value) {
    return fmaxf(a, b);
  } else if constexpr (std::is_same<T, double>::value) {
    return fmax(a, b);
  } else if constexpr (hkb::is_reduced_float<T>::value) {
    return takes_second(hkb::widen(a), hkb::widen(b)) ? b : a;
  } else {
    return b > a ? b : a;
  }
}

struct PoolShape {
  uint64_t n, c, w_in, h_in, w_out, h_out;
};
HKB_DEVICE PoolShape pool_shape(const uint64_t (&d)[4], uint64_t w_k, uint64_t h_k,
                                uint64_t w_stride, uint64_t h_stride) {
  PoolShape p{0, d[1], d[2], d[3], 0, 0};
  if (w_k > p.w_in || h_k > p.h_in || w_stride == 0 || h_stride == 0) return p;
  p.w_out = (p.w_in - w_k) / w_stride + 1;
  p.h_out = (p.h_in - h_k) / h_stride + 1;
  p.n = d[0] * p.c * p.w_out * p.h_out;
  return p;
}

// A window's running result: max_of from its first source on (adding that source again leaves it
// unchanged), or the wide sum, scaled by inv at the end. A bf16 maximum runs on the widened
// value, whose high half is the bf16 bits again (NaN payloads included): one widening a source.
template <typename T, bool kMax>
struct PoolAcc {
  static constexpr bool kWideMax = kMax && std::is_same<T, hkb::bf16>::value;
  using V =
      typename std::conditional<kWideMax, float,
                                typename std::conditional<kMax, T, hkb::wide_acc_t<T>>::type>::type;
  V v;
  HKB_DEVICE explicit PoolAcc(T first) {
    if constexpr (kWideMax) {
      v = hkb::widen(first);
    } else if constexpr (kMax) {
      v = first;
    } else {
      v = V(0);
    }
  }
  HKB_DEVICE void add(T x) {
    if constexpr (kWideMax) {
      const float f = hkb::widen(x);
      v = takes_second(v, f) ? f : v;
    } else if constexpr (kMax) {
      v = max_of(v, x);
    } else {
      v += hkb::to_wide_acc(x);
    }
  }
  HKB_DEVICE T result(double inv) const {
    if constexpr (kWideMax) {
      return hkb::bf16{static_cast<uint16_t>(hkb::float_bits(v) >> 16)};
    } else if constexpr (kMax) {
      return v;
    } else if constexpr (std::is_same<V, double>::value) {
      return static_cast<T>(v * inv);
    } else if constexpr (std::is_same<V, float>::value) {
      return hkb::from_acc<T>(v * static_cast<float>(inv));
    } else {
      return static_cast<T>(static_cast<float>(v) * static_cast<float>(inv));
    }
  }
};

// One window's result from its sources s[a * sx + b * sy], a < w_k, b < h_k, visited in that
// order (max: the first source, then max_of with each next, 0 for an empty window; avg: the sum
// times inv).
template <typename T, bool kMax, typename I>
HKB_DEVICE T pool_window(const T* s, I w_k, I h_k, I sx, I sy, double inv) {
  if (kMax && (w_k == 0 || h_k == 0)) return zero<T>();
  PoolAcc<T, kMax> acc(kMax ? s[0] : zero<T>());
  for (I a = 0; a < w_k; ++a) {
    for (I b = 0; b < h_k; ++b) acc.add(s[a * sx + b * sy]);
  }
  return acc.result(inv);
}

// A window of A x B sources known at compile time: every load before the first combination.
template <int A, int B, typename T, typename I>
HKB_DEVICE void load_window(const T* s, I sx, I sy, T (&v)[A * B]) {
#pragma unroll
  for (int a = 0; a < A; ++a) {
#pragma unroll
    for (int b = 0; b < B; ++b) v[a * B + b] = s[a * sx + b * sy];
  }
}
template <typename T, bool kMax, int N>
HKB_DEVICE T combine_window(const T (&v)[N], double inv) {
  PoolAcc<T, kMax> acc(v[0]);
#pragma unroll
  for (int k = kMax ? 1 : 0; k < N; ++k) acc.add(v[k]);
  return acc.result(inv);
}

// The common 2 x 2 window: tuning::kPoolBatch outputs a step, every load of them in flight before
// the first store.
template <typename T, bool kMax, typename Source>
HKB_DEVICE void pool_2x2(hkb::UnitRange r, uint64_t n, const Source& source, uint32_t sx,
                         uint32_t sy, T* dst, double inv) {
  constexpr int B = hkb::tuning::kPoolBatch;
  for (uint64_t i0 = r.begin; i0 < n; i0 += B * r.step) {
    T v[B][4];
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint64_t i = i0 + b * r.step;
      if (i < n) load_window<2, 2>(source(static_cast<uint32_t>(i)), sx, sy, v[b]);
    }
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint64_t i = i0 + b * r.step;
      if (i < n) dst[i] = combine_window<T, kMax>(v[b], inv);
    }
  }
}

// 2 x 2 windows of stride 2 along a contiguous last dim (sy 1): a unit is U adjacent outputs (at
// most 8 bytes), whose two source rows of 2U values take a load each; then one store of the U
// outputs. The sources combine in pool_2x2's order. The caller checks that every vector access is
// aligned.
template <typename T>
constexpr int pool_unit() {
  constexpr int kFit = 8 / static_cast<int>(sizeof(T));
  return kFit < hkb::tuning::kPoolUnit ? kFit : hkb::tuning::kPoolUnit;
}
template <typename T, bool kMax, typename Source>
HKB_DEVICE void pool_2x2_units(hkb::UnitRange r, uint64_t n, const Source& source, uint32_t sx,
                               T* dst, double inv) {
  constexpr int U = pool_unit<T>();
  using Q = hkb::Pack<T, 2 * U>;
  using O = hkb::Pack<T, U>;
  constexpr int B = sizeof(T) < 4 ? hkb::tuning::kPoolUnitBatchNarrow : hkb::tuning::kPoolBatch;
  const uint64_t units = n / U;
  for (uint64_t u0 = r.begin; u0 < units; u0 += B * r.step) {
    Q top[B], bottom[B];
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint64_t u = u0 + b * r.step;
      if (u < units) {
        const T* s = source(static_cast<uint32_t>(U * u));
        top[b] = *reinterpret_cast<const Q*>(s);
        bottom[b] = *reinterpret_cast<const Q*>(s + sx);
      }
    }
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint64_t u = u0 + b * r.step;
      if (u < units) {
        O o;
#pragma unroll
        for (int j = 0; j < U; ++j) {
          const T v[4] = {top[b].v[2 * j], top[b].v[2 * j + 1], bottom[b].v[2 * j],
                          bottom[b].v[2 * j + 1]};
          o.v[j] = combine_window<T, kMax>(v, inv);
        }
        *reinterpret_cast<O*>(dst + U * u) = o;
      }
    }
  }
}

// The pools' threads: with kPoolResident those of kPoolPerMP blocks of 1024 threads a
// multiprocessor (below its two, the idle blocks of candle's grid retire beside the busy ones).
HKB_DEVICE hkb::UnitRange pool_range() {
  if constexpr (hkb::tuning::kPoolResident) {
    return hkb::resident_grid_range(hkb::tuning::kPoolPerMP);
  }
  return hkb::unit_a_thread_range<false>();
}

// The outputs of the resident grid's threads, each a step apart (2 x 2 windows kPoolBatch at a
// time). Windows never leave the input: the last starts at w_stride * (w_out - 1), at most
// w_in - w_k.
template <typename T, bool kMax>
__device__ void pool2d(uint64_t w_k, uint64_t h_k, uint64_t w_stride, uint64_t h_stride,
                       const size_t* info, const T* src, T* dst) {
  // Nearly all of candle's grid leaves here, on its block index alone (through pool_range, the
  // test merged with the others and ran 16 instructions a warp on sm_90).
  if (hkb::tuning::kPoolResident && hkb::past_resident_bound()) return;
  const hkb::UnitRange r = pool_range();
  if (r.begin == hkb::kIdle) return;
  // The whole layout in one round of loads, before anything that tests it.
  const uint64_t dims[4] = {info[0], info[1], info[2], info[3]};
  const uint64_t st0 = info[4], st1 = info[5], st2 = info[6], st3 = info[7];
  const uint64_t end =
      (dims[0] - 1) * st0 + (dims[1] - 1) * st1 + (dims[2] - 1) * st2 + (dims[3] - 1) * st3 + 1;
  const PoolShape p = pool_shape(dims, w_k, h_k, w_stride, h_stride);
  if (p.n == 0) return;
  const double inv = 1.0 / static_cast<double>(w_k * h_k);
  // Every offset and count below 2^31: 32-bit index math, a third of the 64-bit path's
  // instructions and registers.
  if (p.n < (1ull << 31) && end <= (1ull << 31) && w_stride < (1ull << 31) &&
      h_stride < (1ull << 31)) {
    const uint32_t h_out = static_cast<uint32_t>(p.h_out), w_out = static_cast<uint32_t>(p.w_out);
    const uint32_t c = static_cast<uint32_t>(p.c);
    const uint32_t sx = static_cast<uint32_t>(st2), sy = static_cast<uint32_t>(st3);
    const uint32_t step_x = static_cast<uint32_t>(w_stride) * sx;
    const uint32_t step_y = static_cast<uint32_t>(h_stride) * sy;
    const auto source = [&](uint32_t e) {
      const uint32_t q = e / h_out, oh = e - q * h_out;
      const uint32_t bc = q / w_out, ow = q - bc * w_out;
      const uint32_t b = bc / c, ch = bc - b * c;
      return src + (b * static_cast<uint32_t>(st0) + ch * static_cast<uint32_t>(st1) + ow * step_x +
                    oh * step_y);
    };
    if (w_k == 2 && h_k == 2) {
      // Units: whole units a row, every unit's sources 2U-value aligned; values of up to 4 bytes
      // (an f64 unit would be one output, and its first form spilled 100-330 B on sm_90).
      constexpr uint32_t U = pool_unit<T>();
      const bool units = hkb::tuning::kPoolRowPacks && sizeof(T) <= 4 && h_stride == 2 && sy == 1 &&
                         h_out % U == 0 && st0 % (2 * U) == 0 && st1 % (2 * U) == 0 &&
                         sx % (2 * U) == 0 && hkb::is_aligned(src, 2 * U * sizeof(T)) &&
                         hkb::is_aligned(dst, U * sizeof(T));
      const auto run = [&](const auto& at) {
        if (units) {
          pool_2x2_units<T, kMax>(r, p.n, at, sx, dst, inv);
        } else {
          pool_2x2<T, kMax>(r, p.n, at, sx, sy, dst, inv);
        }
      };
      // Where batch, channel and output row step through the source evenly (a contiguous input
      // of even width), a row of outputs is one index: one division an output instead of three.
      const uint64_t bc_stride = p.c == 1 ? st0 : st1;
      const bool bc_even = dims[0] == 1 || p.c == 1 || st0 == p.c * st1;
      if (hkb::tuning::kPoolRowIndex && bc_even &&
          (dims[0] * p.c == 1 || w_out == 1 || bc_stride == uint64_t{w_out} * step_x)) {
        const uint32_t row_stride = w_out == 1 ? static_cast<uint32_t>(bc_stride) : step_x;
        run([&](uint32_t e) {
          const uint32_t q = e / h_out, oh = e - q * h_out;
          return src + (q * row_stride + oh * step_y);
        });
      } else {
        run(source);
      }
      return;
    }
    for (uint64_t i = r.begin; i < p.n; i += r.step) {
      dst[i] = pool_window<T, kMax>(source(static_cast<uint32_t>(i)), static_cast<uint32_t>(w_k),
                                    static_cast<uint32_t>(h_k), sx, sy, inv);
    }
    return;
  }
  for (uint64_t i = r.begin; i < p.n; i += r.step) {
    const DivMod oh = divmod(i, p.h_out);
    const DivMod ow = divmod(oh.q, p.w_out);
    const DivMod bc = divmod(ow.q, p.c);
    const T* s = src + bc.q * st0 + bc.r * st1 + ow.r * w_stride * st2 + oh.r * h_stride * st3;
    dst[i] = pool_window<T, kMax>(s, w_k, h_k, st2, st3, inv);
  }
}

}  // namespace
