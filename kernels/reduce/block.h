// The reductions' building blocks: tuning aliases, accumulator types and identities, the value
// types combined across threads, the block-wide reduction and the segmented one of fast_*.
#pragma once

#include "../common/elementwise.h"

#include <type_traits>

namespace {

// Shared-memory slots per block reduction: >= 1024 / 32 wave partials, and the chunk width of the
// shared-memory-only path.
constexpr uint32_t kScratch = 64;
// Tuning (tuning.h).
constexpr int kUnroll = hkb::tuning::kRowUnroll;
constexpr uint32_t kFastBlocks = hkb::tuning::kFastBlocks;
constexpr int kFastRows = hkb::tuning::kFastRows;
template <typename T>
constexpr int fast_depth() {
  return sizeof(T) <= 2 ? hkb::tuning::kFastDepthNarrow : hkb::tuning::kFastDepth;
}
// Packs a thread reads of each row in the packed-row path, at least, where the row allows it:
// a segment's reduction is paid once a row and thread.
template <typename T>
constexpr int fast_row_packs() {
  return sizeof(T) <= 2 ? hkb::tuning::kFastRowPacksNarrow : hkb::tuning::kFastRowPacks;
}
// Packs in flight per thread in the element-wise contiguous path of fast_* (rows that are not whole
// packs or not aligned): a 1024-thread block leaves 64 registers per thread on 64-lane CDNA, where
// two packs of 8 or 16 values with their 64-bit indices do not fit beside the rest of the kernel.
template <typename T>
constexpr int fast_unroll() {
  return sizeof(T) <= 2 ? 1 : 2;
}

// Types

// Accumulators (dtypes.h): reduced floats in f32; u8 widened so a shuffle can carry it.
using hkb::acc_t;
using hkb::to_acc;

template <typename A>
HKB_DEVICE A infinity() {
  return static_cast<A>(__builtin_huge_valf());
}

// The identities of min and max for storage type T, in its accumulator type.
template <typename T>
HKB_DEVICE acc_t<T> highest() {
  if constexpr (std::is_floating_point<acc_t<T>>::value) {
    return infinity<acc_t<T>>();
  } else if constexpr (std::is_same<T, uint8_t>::value) {
    return 0xFFu;
  } else if constexpr (std::is_same<T, uint32_t>::value) {
    return 0xFFFFFFFFu;
  } else {
    return static_cast<int64_t>(0x7FFFFFFFFFFFFFFFull);
  }
}
template <typename T>
HKB_DEVICE acc_t<T> lowest() {
  if constexpr (std::is_floating_point<acc_t<T>>::value) {
    return -infinity<acc_t<T>>();
  } else if constexpr (std::is_same<T, int64_t>::value) {
    return static_cast<int64_t>(0x8000000000000000ull);
  } else {
    return 0;
  }
}

template <typename A>
HKB_DEVICE bool is_nan(A x) {
  return x != x;  // false for integers
}
HKB_DEVICE bool sign_bit(float x) {
  return (hkb::float_bits(x) >> 31) != 0;
}
HKB_DEVICE bool sign_bit(double x) {
  return (hkb::double_bits(x) >> 63) != 0;
}
template <typename A>
HKB_DEVICE A abs_value(A x) {
  return x < A(0) ? -x : x;
}
HKB_DEVICE float exp_of(float x) {
  return expf(x);
}
HKB_DEVICE double exp_of(double x) {
  return exp(x);
}
// The norms' 1 / sqrt(x) and mean s / n: in f32 the approximate forms (within 2 ulp; AMD's
// __fdividef divides exactly), since nvcc's correctly rounded ones call out to slow paths that
// cost the norm kernels spills under their 32-register cap.
HKB_DEVICE float inv_sqrt_of(float x) {
  return rsqrtf(x);
}
HKB_DEVICE double inv_sqrt_of(double x) {
  return 1.0 / sqrt(x);
}
HKB_DEVICE float div_by(float s, uint64_t n) {
  return __fdividef(s, static_cast<float>(n));
}
HKB_DEVICE double div_by(double s, uint64_t n) {
  return s / static_cast<double>(n);
}

template <typename A, typename I>
struct ArgPart {
  A value;
  I index;
};
template <typename A>
struct SoftmaxPart {
  A max;
  A sum;  // sum of exp(x - max) over the part
};

// Block-wide reduction

HKB_DEVICE uint32_t block_threads() {
  return blockDim.x * blockDim.y * blockDim.z;
}
// Linear thread index; consecutive values are consecutive lanes of a wave on both vendors.
HKB_DEVICE uint32_t block_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

template <bool kFirst, typename S>
HKB_DEVICE S lane_xor(S v, uint32_t mask, uint32_t width) {
  if constexpr (kFirst) {
    return hkb::shfl_xor_first(v, static_cast<int>(mask), static_cast<int>(width));
  } else {
    return hkb::shfl_xor(v, static_cast<int>(mask), static_cast<int>(width));
  }
}
template <bool kFirst, typename S>
HKB_DEVICE S xor_shuffle(S v, uint32_t mask, uint32_t width) {
  return lane_xor<kFirst>(v, mask, width);
}
template <bool kFirst, typename A, typename I>
HKB_DEVICE ArgPart<A, I> xor_shuffle(ArgPart<A, I> v, uint32_t mask, uint32_t width) {
  return {lane_xor<kFirst>(v.value, mask, width), lane_xor<kFirst>(v.index, mask, width)};
}
template <bool kFirst, typename A>
HKB_DEVICE SoftmaxPart<A> xor_shuffle(SoftmaxPart<A> v, uint32_t mask, uint32_t width) {
  return {lane_xor<kFirst>(v.max, mask, width), lane_xor<kFirst>(v.sum, mask, width)};
}

// Combines `v` over the lanes of a whole wave with op.combine (an xor butterfly): every lane of the
// wave gets the result, with the same bits.
template <class Op>
HKB_DEVICE typename Op::V wave_reduce(typename Op::V v, const Op& op) {
  constexpr uint32_t W = HKB_WAVE_SIZE;
  for (uint32_t m = W >> 1; m > 0; m >>= 1) v = op.combine(v, xor_shuffle<false>(v, m, W));
  return v;
}

// Addition as a block reduction's op (the norms' sums).
template <typename A>
struct PlusOp {
  using V = A;
  HKB_DEVICE V identity() const { return A(0); }
  HKB_DEVICE V combine(V a, V b) const { return a + b; }
};

// The shared slots of the block reductions of values of type V: one array per type in a kernel,
// shared by every reduction of that type (a kernel's static shared memory bounds how many of its
// blocks, most of whose waves have left, a multiprocessor holds).
template <typename V>
HKB_DEVICE V* shared_slots() {
  __shared__ V slots[kScratch];
  return slots;
}

// Combines every thread's `v` with op.combine; every thread gets the result. All threads of the
// block must call it together: the first n, the others having left (n a multiple of the wave,
// which a barrier then does not wait for). Combines are commutative, so the xor butterfly gives
// every lane the same bits.
template <class Op>
HKB_DEVICE typename Op::V block_reduce(typename Op::V v, const Op& op,
                                       uint32_t n = block_threads()) {
  using V = typename Op::V;
  constexpr uint32_t W = HKB_WAVE_SIZE;
  V* scratch = shared_slots<V>();
  const uint32_t tid = block_tid();
  if (n <= W && (n & (n - 1)) == 0) {
    // One wave, of which only lanes [0, n) exist.
    for (uint32_t m = n >> 1; m > 0; m >>= 1) v = op.combine(v, xor_shuffle<true>(v, m, n));
    return v;
  }
  if (n % W == 0) {
    v = wave_reduce(v, op);
    if (tid % W == 0) scratch[tid / W] = v;
    hkb::block_sync();
    // Every wave combines the n / W <= W partials with a second butterfly (a tree, like the
    // first), so every thread has the result without another barrier.
    const uint32_t lane = tid % W;
    V r = lane < n / W ? scratch[lane] : op.identity();
    r = wave_reduce(r, op);
    hkb::block_sync();  // scratch is free for the next call
    return r;
  }
  // Any other size: thread 0 folds chunks of kScratch values in thread order.
  V r = v;
  for (uint32_t base = 0; base < n; base += kScratch) {
    if (tid >= base && tid - base < kScratch) scratch[tid - base] = v;
    hkb::block_sync();
    if (tid == 0) {
      const uint32_t count = n - base < kScratch ? n - base : kScratch;
      for (uint32_t i = base == 0 ? 1 : 0; i < count; ++i) r = op.combine(r, scratch[i]);
    }
    hkb::block_sync();
  }
  if (tid == 0) scratch[0] = r;
  hkb::block_sync();
  r = scratch[0];
  hkb::block_sync();
  return r;
}

// The sums of G values over the first n threads (n a multiple of the wave, the others having
// left), each value as block_reduce adds it, through block_reduce's slots of A (one barrier
// pair for all G).
template <int G, typename A>
HKB_DEVICE void block_sums(A (&v)[G], uint32_t n) {
  constexpr uint32_t W = HKB_WAVE_SIZE, kWaves = 1024 / 32;
  static_assert(G * kWaves <= kScratch, "G sums of every wave fit the slots");
  const PlusOp<A> op;
  A* slots = shared_slots<A>();
  const uint32_t tid = block_tid(), lane = tid % W;
#pragma unroll
  for (int g = 0; g < G; ++g) {
    v[g] = wave_reduce(v[g], op);
    if (lane == 0) slots[g * kWaves + tid / W] = v[g];
  }
  hkb::block_sync();
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const A r = lane < n / W ? slots[g * kWaves + lane] : A(0);
    v[g] = wave_reduce(r, op);
  }
  hkb::block_sync();
}

// Segmented reduction of a batch of values: value k (k < count <= kFastRows) of every thread is
// combined over aligned segments of `seg` consecutive threads (linear ids [s * seg, s * seg +
// seg)), and emit(k, s, result) is called once per value and segment, from one thread. `seg`
// divides the block size n; it is n, or a power of two with n a power of two, so a segment of at
// most a wave lies inside one wave and a wider one is whole waves. All threads of the block call
// segment_put for k = 0, 1, ... and then segment_finish together. Segments within a wave (and
// blocks that are not a power of two) are done in segment_put; wider segments leave one partial
// per wave and value in `buf`, and segment_finish combines them after one barrier, so a batch of
// values costs one barrier. The caller alternates between two buffers (fast_scratch): a batch's
// writes to one buffer come after the previous batch's barrier, itself after every read of the
// batch before it from the same buffer.
constexpr uint32_t kMaxWaves = 1024 / 32;  // wave partials of a block: n / W <= 1024 / 32

template <class V>
HKB_DEVICE V* fast_scratch(uint32_t parity) {
  __shared__ V scratch[2 * kFastRows * kMaxWaves];
  return scratch + (parity & 1u) * (kFastRows * kMaxWaves);
}

// kAnySize: the block may be of any size (otherwise the caller guarantees a power of two).
template <bool kAnySize, class Op, class Emit>
HKB_DEVICE void segment_put(typename Op::V v, const Op& op, uint32_t seg, uint32_t k,
                            typename Op::V* buf, Emit&& emit) {
  constexpr uint32_t W = HKB_WAVE_SIZE;
  const uint32_t n = block_threads();
  const uint32_t tid = block_tid();
  if (kAnySize && seg == n && (n & (n - 1)) != 0) {
    // A block that is not a power of two: block_reduce's shared-memory path.
    v = block_reduce(v, op);
    if (tid == 0) emit(k, 0u, v);
    return;
  }
  if (seg <= W) {
    // Masks below seg never leave the segment. A block below the wave has only lanes [0, n).
    if (n < W) {
      for (uint32_t m = seg >> 1; m > 0; m >>= 1) v = op.combine(v, xor_shuffle<true>(v, m, n));
    } else {
      for (uint32_t m = seg >> 1; m > 0; m >>= 1) v = op.combine(v, xor_shuffle<false>(v, m, W));
    }
    if (tid % seg == 0) emit(k, tid / seg, v);
    return;
  }
  v = wave_reduce(v, op);
  if (tid % W == 0) buf[k * (n / W) + tid / W] = v;
}

// After count segment_put calls: lane groups of g = seg / W (a power of two <= W, aligned inside
// a wave) each combine the g wave partials of one (value, segment) pair with a butterfly over masks
// g/2 .. 1; count * (n / seg) pairs of g lanes are count * n / W <= n threads.
template <class Op, class Emit>
HKB_DEVICE void segment_finish(const Op& op, uint32_t seg, uint32_t count,
                               const typename Op::V* buf, Emit&& emit) {
  using V = typename Op::V;
  constexpr uint32_t W = HKB_WAVE_SIZE;
  const uint32_t n = block_threads();
  if (seg <= W || (n & (n - 1)) != 0) return;  // emitted by segment_put
  const uint32_t tid = block_tid();
  hkb::block_sync();
  const uint32_t nw = n / W;
  const uint32_t g = seg / W;
  const uint32_t segs = n / seg;
  const uint32_t pair = tid / g;  // value pair / segs, segment pair % segs
  const bool has = pair < count * segs;
  // A group of g lanes without a pair never emits and combines only within itself: it takes entry
  // 0 (written by this batch). Choosing op.identity() for it made clang select between the
  // addresses of the buffer and of a temporary, keeping the identity in scratch memory.
  V r = buf[has ? (pair / segs) * nw + (pair % segs) * g + tid % g : 0];
  for (uint32_t m = g >> 1; m > 0; m >>= 1) r = op.combine(r, xor_shuffle<false>(r, m, W));
  if (has && tid % g == 0) emit(pair / segs, pair % segs, r);
}

}  // namespace
