// rmsnorm and layernorm under candle's launch (a block a row): the row-a-block path and rows of at
// most a pack a thread by groups of blocks.
#pragma once

#include "rows.h"

namespace {

// ---------------------------------------------------------------------------------------------
// rmsnorm / layernorm, one block per row. When every pointer is 16-byte aligned and n_cols a whole
// number of 16-byte packs, each thread keeps its first kCached packs (cached_packs) in registers
// between the passes (a row of up to kCached * 16 bytes * blockDim is read from memory once); the
// rest is re-read.

// Pack q of p, or a pack of `fill` where p is absent (alpha: 1, beta: 0): the output loops then
// widen every value alike instead of selecting one per value.
template <typename T, int V, typename A>
HKB_DEVICE hkb::Pack<T, V> pack_or(const hkb::Pack<T, V>* p, uint64_t q, A fill) {
  if (p != nullptr) return p[q];
  hkb::Pack<T, V> f;
  const T t = hkb::from_acc<T>(fill);
#pragma unroll
  for (int k = 0; k < V; ++k) f.v[k] = t;
  return f;
}

// Packs a thread caches: two for 2-byte values, whose conversions to and from f32 take the
// registers that two blocks per multiprocessor leave (rows of up to 16384 cached in 1024 threads).
template <typename T>
struct cached_packs {
  static constexpr int value = sizeof(T) == 2 ? 2 : 4;
};
// layernorm keeps one pack of 2-byte values (rows of up to 8 * blockDim cached): its second
// reduction, beta and the bf16 conversions spill two packs under NVIDIA's 32-register cap.
template <typename T>
struct layernorm_cached_packs {
  static constexpr int value = sizeof(T) == 2 ? 1 : cached_packs<T>::value;
};

// Row access for the norms: the vector path or the scalar one, both with the same thread-to-element
// mapping in every pass; the first kCached packs of each thread stay in registers.
template <typename T, int kCached = cached_packs<T>::value>
struct NormRow {
  static constexpr int V = 16 / sizeof(T);
  using P = hkb::Pack<T, V>;
  const T* x;
  T* y;
  const T* alpha;
  const T* beta;
  uint64_t n;
  uint32_t tid, nt;
  bool vec;
  P cache[kCached];

  // Threads tid_ of nt_ take the row (the whole block by default).
  HKB_DEVICE NormRow(const T* x_, T* y_, const T* alpha_, const T* beta_, uint64_t n_,
                     uint32_t tid_ = block_tid(), uint32_t nt_ = block_threads())
      : x(x_), y(y_), alpha(alpha_), beta(beta_), n(n_), tid(tid_), nt(nt_) {
    // Four tests, not hkb::all_aligned as in norm_grouped: that form spilled rmsnorm_bf16 on sm_90.
    vec = n % V == 0 && hkb::is_aligned(x, 16) && hkb::is_aligned(y, 16) &&
          (alpha == nullptr || hkb::is_aligned(alpha, 16)) &&
          (beta == nullptr || hkb::is_aligned(beta, 16));
  }
  // First pass: loads (and caches) the row, f(value) per element.
  template <typename F>
  HKB_DEVICE void load(F&& f) {
    if (vec) {
      const P* xp = reinterpret_cast<const P*>(x);
      const uint64_t packs = n / V;
#pragma unroll
      for (int c = 0; c < kCached; ++c) {
        const uint64_t q = tid + static_cast<uint64_t>(c) * nt;
        if (q < packs) cache[c] = xp[q];
      }
    }
    reread(f);
  }
  // Another read pass over the same elements, from the cache where possible.
  template <typename F>
  HKB_DEVICE void reread(F&& f) {
    if (!vec) {
      for (uint64_t j = tid; j < n; j += nt) f(to_acc(x[j]));
      return;
    }
    const P* xp = reinterpret_cast<const P*>(x);
    const uint64_t packs = n / V;
#pragma unroll
    for (int c = 0; c < kCached; ++c) {
      const uint64_t q = tid + static_cast<uint64_t>(c) * nt;
      if (q < packs) {
#pragma unroll
        for (int k = 0; k < V; ++k) f(to_acc(cache[c].v[k]));
      }
    }
    for (uint64_t q = tid + static_cast<uint64_t>(kCached) * nt; q < packs; q += nt) {
      const P p = xp[q];
#pragma unroll
      for (int k = 0; k < V; ++k) f(to_acc(p.v[k]));
    }
  }
  // Output pass: y[j] = g(x[j], alpha[j] or 1, beta[j] or 0).
  template <typename G>
  HKB_DEVICE void write(G&& g) {
    using A = acc_t<T>;
    if (!vec) {
      for (uint64_t j = tid; j < n; j += nt) {
        const A a = alpha != nullptr ? to_acc(alpha[j]) : A(1);
        const A b = beta != nullptr ? to_acc(beta[j]) : A(0);
        y[j] = hkb::from_acc<T>(g(to_acc(x[j]), a, b));
      }
      return;
    }
    const P* xp = reinterpret_cast<const P*>(x);
    const P* ap = reinterpret_cast<const P*>(alpha);
    const P* bp = reinterpret_cast<const P*>(beta);
    P* yp = reinterpret_cast<P*>(y);
    const uint64_t packs = n / V;
    // A select a value, not pack_or as in norm_group: pack_or here spilled layernorm_f32 on sm_90.
    auto emit = [&](const P& p, uint64_t q) {
      P a, b, o;
      if (ap != nullptr) a = ap[q];
      if (bp != nullptr) b = bp[q];
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const A av = ap != nullptr ? to_acc(a.v[k]) : A(1);
        const A bv = bp != nullptr ? to_acc(b.v[k]) : A(0);
        o.v[k] = hkb::from_acc<T>(g(to_acc(p.v[k]), av, bv));
      }
      yp[q] = o;
    };
#pragma unroll
    for (int c = 0; c < kCached; ++c) {
      const uint64_t q = tid + static_cast<uint64_t>(c) * nt;
      if (q < packs) emit(cache[c], q);
    }
    for (uint64_t q = tid + static_cast<uint64_t>(kCached) * nt; q < packs; q += nt) {
      emit(xp[q], q);
    }
  }
};

// Threads of a block of whole waves that take a row of n values (the rest leave at once, so
// that the multiprocessor holds more rows): whole waves, enough for one 16-byte pack (or value) a
// thread, at most the block. n is below 2^31 (candle's int n_cols).
template <typename T>
HKB_DEVICE uint32_t norm_threads(uint64_t n) {
  constexpr uint32_t V = 16 / sizeof(T), W = HKB_WAVE_SIZE;
  const uint32_t nt = block_threads();
  if (!hkb::tuning::kNormTrim || nt % W != 0 || n >= nt * uint64_t{V}) return nt;
  const uint32_t m = static_cast<uint32_t>(n);
  const uint32_t need = ((m % V == 0 ? m / V : m) + W - 1) / W * W;
  if (hkb::tuning::kNormTrim == 2 && 2 * need > nt) return nt;
  return need < nt ? need : nt;
}

// Whether candle's one-row blocks take the rows by groups of tuning::kNormGroup (norm_group): rows
// of at most one 16-byte pack a thread, every pointer 16-byte aligned (a test every block answers
// alike).
template <typename T>
HKB_DEVICE bool norm_grouped(const T* x, const T* y, const T* alpha, const T* beta, uint32_t n,
                             uint32_t nt) {
  constexpr uint32_t V = 16 / sizeof(T);
  return hkb::tuning::kNormGroup > 1 && nt % HKB_WAVE_SIZE == 0 && n % V == 0 && n / V <= nt &&
         hkb::all_aligned(16, x, y, alpha, beta);
}

#if HKB_NORM_APART
#define HKB_NORM_GROUP_FN HKB_DEVICE_APART
#else
#define HKB_NORM_GROUP_FN HKB_DEVICE
#endif
// rmsnorm (kLayer false) or layernorm of the rows blockIdx.x .. + G - 1 below gridDim.x, each
// thread of the row's nt one pack of every row; the sums of the G rows go through one block
// reduction, and alpha and beta are read once for all of them. A thread sums its pack in the
// order NormRow does, so the results are those of a row a block. The write pass takes the packs
// from registers or, where tuning::norm_group_reload says, reads them again (from L1, after the
// barriers: fewer registers live).
template <bool kLayer, int G, typename T>
HKB_NORM_GROUP_FN void norm_group(const T* src, T* dst, const T* alpha, const T* beta, uint64_t n,
                                  uint32_t nt, float eps) {
  using A = acc_t<T>;
  static_assert(std::is_same<A, hkb::compute_t<T>>::value, "packs widen to the accumulator");
  constexpr int V = 16 / sizeof(T);
  using P = hkb::Pack<T, V>;
  const uint32_t tid = block_tid();
  const bool has = tid < n / V;
  const int rows = gridDim.x - blockIdx.x < G ? static_cast<int>(gridDim.x - blockIdx.x) : G;
  const uint64_t first = static_cast<uint64_t>(blockIdx.x) * (n / V) + tid;
  const P* xp = reinterpret_cast<const P*>(src) + first;
  P x[G];
  A s[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (has && g < rows) x[g] = xp[g * (n / V)];
  }
#pragma unroll
  for (int g = 0; g < G; ++g) {
    s[g] = A(0);
    if (has && g < rows) {
      A v[V];
      hkb::widen_pack(x[g], v);
#pragma unroll
      for (int k = 0; k < V; ++k) s[g] += kLayer ? v[k] : v[k] * v[k];
    }
  }
  block_sums(s, nt);
  A mean[G], inv[G];
  if constexpr (kLayer) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      mean[g] = div_by(s[g], n);
      s[g] = A(0);
      if (has && g < rows) {
        A v[V];
        hkb::widen_pack(x[g], v);
#pragma unroll
        for (int k = 0; k < V; ++k) s[g] += (v[k] - mean[g]) * (v[k] - mean[g]);
      }
    }
    block_sums(s, nt);
  }
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if constexpr (!kLayer) mean[g] = A(0);
    inv[g] = inv_sqrt_of(div_by(s[g], n) + static_cast<A>(eps));
  }
  if (!has) return;
  const P a = pack_or<T>(reinterpret_cast<const P*>(alpha), tid, A(1));
  const P b = pack_or<T>(reinterpret_cast<const P*>(beta), tid, A(0));
  A av[V], bv[V];
  hkb::widen_pack(a, av);
  hkb::widen_pack(b, bv);
  P* yp = reinterpret_cast<P*>(dst) + first;
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (g < rows) {
      const P xg = hkb::tuning::norm_group_reload(sizeof(T)) ? xp[g * (n / V)] : x[g];
      A v[V];
      hkb::widen_pack(xg, v);
      P o;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        o.v[k] = hkb::from_acc<T>(kLayer ? (v[k] - mean[g]) * inv[g] * av[k] + bv[k]
                                         : v[k] * inv[g] * av[k]);
      }
      yp[g * (n / V)] = o;
    }
  }
}

// rmsnorm or layernorm of the block's row by the block's first nt threads (NormRow).
template <bool kLayer, typename T>
HKB_DEVICE void norm_row(const T* src, T* dst, const T* alpha, const T* beta, uint64_t n,
                         uint32_t nt, float eps) {
  using A = acc_t<T>;
  constexpr int kC = kLayer ? layernorm_cached_packs<T>::value : cached_packs<T>::value;
  NormRow<T, kC> row(src + blockIdx.x * n, dst + blockIdx.x * n, alpha, beta, n, block_tid(), nt);
  if constexpr (kLayer) {
    A s = 0;
    row.load([&](A v) { s += v; });
    const A mean = div_by(block_reduce(s, PlusOp<A>{}, nt), n);
    A dev = 0;
    row.reread([&](A v) { dev += (v - mean) * (v - mean); });
    const A var = div_by(block_reduce(dev, PlusOp<A>{}, nt), n);
    const A inv = inv_sqrt_of(var + static_cast<A>(eps));
    row.write([&](A v, A a, A b) { return (v - mean) * inv * a + b; });
  } else {
    A sq = 0;
    row.load([&](A v) { sq += v * v; });
    sq = block_reduce(sq, PlusOp<A>{}, nt);
    const A inv = inv_sqrt_of(div_by(sq, n) + static_cast<A>(eps));
    row.write([&](A v, A a, A) { return v * inv * a; });
  }
}

// rmsnorm (kLayer false, beta null) or layernorm under candle's launch, a block a row.
template <bool kLayer, typename T>
__device__ void norm(const T* src, T* dst, const T* alpha, const T* beta, int n_cols, float eps) {
  if (n_cols <= 0) return;
  const uint64_t n = static_cast<uint64_t>(n_cols);
  const uint32_t nt = norm_threads<T>(n);
  if (block_tid() >= nt) return;
  if (norm_grouped<T>(src, dst, alpha, beta, static_cast<uint32_t>(n_cols), nt)) {
    constexpr int G = hkb::tuning::kNormGroup;
    if (blockIdx.x % G == 0) norm_group<kLayer, G, T>(src, dst, alpha, beta, n, nt, eps);
    return;
  }
  norm_row<kLayer, T>(src, dst, alpha, beta, n, nt, eps);
}

template <typename T>
__device__ void rmsnorm(const T* src, T* dst, const T* alpha, int n_cols, float eps) {
  norm<false>(src, dst, alpha, static_cast<const T*>(nullptr), n_cols, eps);
}

template <typename T>
__device__ void layernorm(const T* src, T* dst, const T* alpha, const T* beta, int n_cols,
                          float eps) {
  norm<true>(src, dst, alpha, beta, n_cols, eps);
}

}  // namespace
