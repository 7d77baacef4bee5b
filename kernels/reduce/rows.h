// Row kernels, one block per row: softmax, and the row traversals it, the norms and fast_* use.
#pragma once

#include "ops.h"

namespace {

// g(load(q), q) for the packs q < packs of thread `tid` of `nt` in stages of kStage, the next
// stage's loads issued before this stage's calls (the calls in visit_packs' order).
template <int kStage, typename P, typename L, typename G>
HKB_DEVICE void stream_packs(L&& load, uint64_t packs, uint32_t tid, uint32_t nt, G&& g) {
  const uint64_t step = static_cast<uint64_t>(kStage) * nt;
  P cur[kStage], nxt[kStage];
#pragma unroll
  for (int u = 0; u < kStage; ++u) {
    const uint64_t q = tid + static_cast<uint64_t>(u) * nt;
    if (q < packs) cur[u] = load(q);
  }
  for (uint64_t b = tid; b < packs; b += step) {
#pragma unroll
    for (int u = 0; u < kStage; ++u) {
      const uint64_t q = b + step + static_cast<uint64_t>(u) * nt;
      if (q < packs) nxt[u] = load(q);
    }
#pragma unroll
    for (int u = 0; u < kStage; ++u) {
      const uint64_t q = b + static_cast<uint64_t>(u) * nt;
      if (q < packs) g(cur[u], q);
      cur[u] = nxt[u];
    }
  }
}

// For the values of x that belong to thread `tid` of `nt`, with 16-byte loads (kUnroll independent
// packs in flight): one(x[j], j) for the scalar head (up to 16-byte alignment) and tail, and for
// the packs of V values from x[j] on either one(value, index) of each value (kElements) or
// pack(p, j). kStage > 0: the packs go through stream_packs' stages instead, in the same order.
template <int kUnroll, bool kElements, int kStage = 0, typename T, typename FP, typename F1>
HKB_DEVICE void visit_packs(const T* x, uint64_t n, uint32_t tid, uint32_t nt, FP&& pack,
                            F1&& one) {
  constexpr int V = 16 / sizeof(T);
  using P = hkb::Pack<T, V>;
  const uint64_t misalign = (reinterpret_cast<uintptr_t>(x) % 16) / sizeof(T);
  uint64_t head = misalign == 0 ? 0 : V - misalign;
  if (head > n) head = n;
  for (uint64_t j = tid; j < head; j += nt) one(x[j], j);  // head < V, but nt may be smaller
  const uint64_t packs = (n - head) / V;
  const P* xp = reinterpret_cast<const P*>(x + head);
  if constexpr (kStage > 0) {
    static_assert(!kElements, "streamed stages: whole packs");
    stream_packs<kStage, P>([&](uint64_t q) { return xp[q]; }, packs, tid, nt,
                            [&](const P& p, uint64_t q) { pack(p, head + q * V); });
  } else {
    for (uint64_t b = tid; b < packs; b += static_cast<uint64_t>(kUnroll) * nt) {
      P buf[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const uint64_t q = b + static_cast<uint64_t>(u) * nt;
        if (q < packs) buf[u] = xp[q];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const uint64_t q = b + static_cast<uint64_t>(u) * nt;
        if (q < packs) {
          if constexpr (kElements) {
#pragma unroll
            for (int k = 0; k < V; ++k) one(buf[u].v[k], head + q * V + k);
          } else {
            pack(buf[u], head + q * V);
          }
        }
      }
    }
  }
  for (uint64_t j = head + packs * V + tid; j < n; j += nt) one(x[j], j);
}

// Calls f(x[j], j) for the j in [0, n) that belong to thread `tid` of `nt` (visit_packs). The
// per-value calls sit in visit_packs' own loop: through a pack callback, fast_argmin/argmax_u8
// took 48 bytes of scratch on gfx940.
template <int kUnroll, typename T, typename F>
HKB_DEVICE void visit_contiguous(const T* x, uint64_t n, uint32_t tid, uint32_t nt, F&& f) {
  visit_packs<kUnroll, true>(x, n, tid, nt, f, f);
}

// y[j] = f(x[j]) for the j of thread `tid`, last elements first (the end of a row that was just
// read is the part most likely still in cache). 16-byte accesses, kDepth packs in flight, when x
// and y share their offset within 16 bytes, scalar otherwise. x may equal y.
template <int kDepth, typename T, typename F>
HKB_DEVICE void map_row_reverse(const T* x, T* y, uint64_t n, uint32_t tid, uint32_t nt, F&& f) {
  constexpr int V = 16 / sizeof(T);
  using P = hkb::Pack<T, V>;
  const uintptr_t mx = reinterpret_cast<uintptr_t>(x) % 16;
  if (mx != reinterpret_cast<uintptr_t>(y) % 16) {
    for (uint64_t j = tid; j < n; j += nt) {
      const uint64_t i = n - 1 - j;
      y[i] = f(x[i]);
    }
    return;
  }
  uint64_t head = mx == 0 ? 0 : (16 - mx) / sizeof(T);
  if (head > n) head = n;
  const uint64_t packs = (n - head) / V;
  for (uint64_t j = head + packs * V + tid; j < n; j += nt) y[j] = f(x[j]);
  const P* xp = reinterpret_cast<const P*>(x + head);
  P* yp = reinterpret_cast<P*>(y + head);
  for (uint64_t b = tid; b < packs; b += static_cast<uint64_t>(kDepth) * nt) {
    P buf[kDepth];
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const uint64_t r = b + static_cast<uint64_t>(u) * nt;
      if (r < packs) buf[u] = xp[packs - 1 - r];
    }
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const uint64_t r = b + static_cast<uint64_t>(u) * nt;
      if (r < packs) {
        P o;
#pragma unroll
        for (int k = 0; k < V; ++k) o.v[k] = f(buf[u].v[k]);
        yp[packs - 1 - r] = o;
      }
    }
  }
  for (uint64_t j = tid; j < head; j += nt) y[j] = f(x[j]);
}

// ---------------------------------------------------------------------------------------------
// softmax over rows of n_cols contiguous elements, one block per row.

// One output of a row whose max is m and whose sum of exponentials is 1 / inv.
template <bool kFast, typename T, typename A>
HKB_DEVICE T softmax_out(T v, A m, A inv) {
  return hkb::narrow<T>(softmax_exp<kFast>(hkb::widen(v) - m) * inv);
}

template <typename T>
__device__ void softmax(const T* src, T* dst, int n_cols) {
  using A = hkb::compute_t<T>;
  if (n_cols <= 0) return;
  const uint64_t n = static_cast<uint64_t>(n_cols);
  const uint32_t tid = block_tid();
  const uint32_t nt = block_threads();
  const T* x = src + blockIdx.x * n;
  T* y = dst + blockIdx.x * n;
  constexpr bool kFast = hkb::is_reduced_float<T>::value;
  using Op = SoftmaxOp<A, kFast>;
  constexpr int V = 16 / sizeof(T);
  using P = hkb::Pack<T, V>;
  SoftmaxPart<A> st = Op{}.identity();
  auto add = [&](const auto& v) { Op::add_run(st, v); };
  const auto add_pack = [&](const P& p, uint64_t) {
    constexpr int kRun = hkb::tuning::kSoftmaxRun;
    constexpr int kR = V < kRun ? V : kRun;
#pragma unroll
    for (int h = 0; h < V; h += kR) {
      A v[kR];
#pragma unroll
      for (int k = 0; k < kR; ++k) v[k] = hkb::widen(p.v[h + k]);
      add(v);
    }
  };
  // A row of at most a 16-byte pack a thread, whole and aligned (uniform in the block): each
  // thread keeps its pack in registers and writes from them, so the row is read once. The same
  // operations in the same order as the two passes below.
  if (hkb::tuning::kSoftmaxHeld && n % V == 0 && n / V <= nt && hkb::all_aligned(16, x, y)) {
    const bool mine = tid < n / V;
    P p{};
    if (mine) {
      p = reinterpret_cast<const P*>(x)[tid];
      add_pack(p, 0);
    }
    const SoftmaxPart<A> row = block_reduce(st, Op{});
    if (mine) {
      const A inv = A(1) / row.sum;
      P o;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        o.v[k] = softmax_out<kFast>(p.v[k], row.max, inv);
      }
      reinterpret_cast<P*>(y)[tid] = o;
    }
    return;
  }
  // f32 rows stream their first pass on NVIDIA (tuning.h); 2-byte rows measured slower so.
  constexpr int kReadStage = sizeof(T) == 4 ? hkb::tuning::kSoftmaxReadStage : 0;
  visit_packs<kUnroll, false, kReadStage>(x, n, tid, nt, add_pack, [&](T x1, uint64_t) {
    const A v[1] = {hkb::widen(x1)};
    add(v);
  });
  const SoftmaxPart<A> row = block_reduce(st, Op{});
  const A inv = A(1) / row.sum;
  const A m = row.max;
  constexpr int kDepth = sizeof(T) == 2 ? hkb::tuning::kSoftmaxNarrowDepth : kUnroll;
  map_row_reverse<kDepth>(x, y, n, tid, nt, [&](T v) { return softmax_out<kFast>(v, m, inv); });
}

}  // namespace
