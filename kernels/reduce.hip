// REDUCE: candle's reduction family. fast_{sum,min,max,argmin,argmax} (one block per output),
// sum (atomic scatter into a pre-zeroed output), softmax over the last dim, rmsnorm, layernorm and
// the three rotary embeddings rope_i / rope / rope_thd. Names, parameters and launch geometry are
// candle's (see /work/shared/spec/candle-kernels.tsv); the semantics below are hkb's contract.
//
// Geometry. fast_*: any grid (blocks loop over outputs), block = next_pow2(min(1024, E)) as candle
// launches it, or any other block of at most 1024 threads. softmax/rmsnorm/layernorm: one block
// per row, row = blockIdx.x (the kernels have no row-count parameter, so the grid must equal the
// row count, as in candle); any block shape of at most 1024 threads, candle's (1,32,1) and 32/1024
// included; rmsnorm/layernorm's `block_size` argument is accepted and the launch's real block size
// is used. rope*: any grid (grid-stride over pairs). Every cross-lane step is a shuffle with an
// explicit width; a block of a power-of-two size below the wave (32 threads on a 64-lane CDNA wave)
// reduces with shuffles of that width, a block that is a multiple of the wave reduces per wave and
// then through shared memory, any other size through shared memory alone (docs/wavefront.md).
//
// fast_* work split: blocks [0, min(grid, HKB_FAST_BLOCKS)) each take one chunk of consecutive
// outputs (ceil(outputs / blocks)); the other blocks return before reading anything, so candle's
// grid of one block per output costs only their launch. Contiguous 16-byte aligned rows of whole
// 16-byte packs (2+ byte types, power-of-two blocks) are read as one coalesced stream per chunk,
// several rows per pass when a row has fewer packs than the block has threads (aligned
// power-of-two segments of threads per row), with the next packs in flight across row ends.
// Every path reduces HKB_FAST_ROWS rows (or passes) with one barrier (segment_put/finish).
// fast_* layout: info = [dims, strides] of the source with the reduced dims last (candle's
// FastReduce order); output o reduces logical elements [o*E, (o+1)*E) with E =
// el_to_sum_per_block. E == 0 writes the identity to outputs 0..gridDim.x-1 (candle's empty case).
//
// Semantics decisions (candle's CUDA kernels are order-dependent here; these are deterministic):
// - argmin/argmax: the index is the position inside the reduced group (row-major over the reduced
//   dims; equal to candle's idx % dims[nd-1] for one reduced dim). Ties: the first (smallest)
//   index wins; -0.0 < +0.0 as for min/max. NaN: a NaN beats every number for both argmin and
//   argmax, so the result is the index of the first NaN (numpy/PyTorch). An empty group gives
//   0xFFFFFFFF.
// - min/max: NaN propagates (any NaN gives NaN); -0.0 < +0.0 (IEEE 754-2019 minimum/maximum).
//   Empty: max = -inf / the type's minimum, min = +inf / the type's maximum.
// - sums: f16/bf16/f32 accumulate in f32, f64 in f64. Each thread sums with Neumaier compensation
//   (the packed-row path over pack sums: a 16-byte pack's values added pairwise first),
//   then a tree of at most log2(block) levels (power-of-two blocks): |error| <= (log2(block) + 3) *
//   eps * sum|x| for any n. An infinite or NaN partial skips its compensation term, so inf/NaN
//   propagate as in a plain sum. Integer sums wrap modulo 2^bits (u8 as candle's u8 accumulator
//   does).
// - sum (atomic): out[dst(i)] += inp[i] where dst(i) removes each summed dim in the order given by
//   info = [dims, strides, sum_dims_l, sum_dims_s]: di = (di / s / l) * s + di % s. f16/bf16 add in
//   f32 and round per atomic step (compare-and-swap on the enclosing 32-bit word).
// - softmax: f32 math for f16/bf16 (candle does max/exp in T), f64 for f64. Online max/sum in one
//   pass, then exp(x - max) / sum; -inf entries give 0; a NaN anywhere makes the row NaN; a +inf
//   entry, or a row of only -inf, makes the row NaN (inf - inf), as PyTorch.
// - rmsnorm: y = x / sqrt(mean(x^2) + eps) * alpha. layernorm: y = (x - mean) / sqrt(var + eps) *
//   alpha + beta with var = mean((x - mean)^2) (two passes; candle's E[x^2] - mean^2 cancels). A
//   null alpha means 1, a null beta 0. Math in f32 (f64 for f64).
// - rope*: math in f32 for f16/bf16 (candle rounds to T at each step). d (and td) must be even; a
//   zero half-width writes nothing. stride_b != 0 selects per-batch cos/sin tables: batch =
//   (2 * pair) / stride_b, table offset batch * td/2 (rope_i, rope) or batch * t*d/2 (rope_thd).
#include "common/dtype_lists.h"
#include "common/elementwise.h"

#include <type_traits>

namespace {

// Shared-memory slots per block reduction: >= 1024 / 32 wave partials, and the chunk width of the
// shared-memory-only path.
constexpr uint32_t kScratch = 64;
// 16-byte loads a thread has in flight in the unrolled loops.
constexpr int kUnroll = 4;
// fast_* tuning (compile-time so that bench/reduce_probe.cu can build variants; the defaults are
// what the kernels ship with):
// HKB_FAST_BLOCKS: blocks that do work; blocks from this index on return before reading anything.
// HKB_FAST_ROWS: row passes whose partials a thread keeps in registers before one segment
//   reduction combines them all (one barrier per HKB_FAST_ROWS passes).
// HKB_FAST_DEPTH: 16-byte packs a thread has in flight ahead of their use in the packed-row path.
// HKB_FAST_PRESUM: 1: the packed-row path adds a pack's values pairwise before the compensated sum.
#ifndef HKB_FAST_BLOCKS
#define HKB_FAST_BLOCKS 1024
#endif
#ifndef HKB_FAST_ROWS
#define HKB_FAST_ROWS 8
#endif
#ifndef HKB_FAST_DEPTH
#define HKB_FAST_DEPTH 2
#endif
#ifndef HKB_FAST_PRESUM
#define HKB_FAST_PRESUM 1
#endif
constexpr uint32_t kFastBlocks = HKB_FAST_BLOCKS;
constexpr int kFastRows = HKB_FAST_ROWS;
// Packs in flight of 2-byte types: one (their packs widen to 8 floats, and more spill on NVIDIA).
#ifndef HKB_FAST_DEPTH_NARROW
#define HKB_FAST_DEPTH_NARROW 1
#endif
template <typename T>
constexpr int fast_depth() {
  return sizeof(T) <= 2 ? HKB_FAST_DEPTH_NARROW : HKB_FAST_DEPTH;
}
// Packs in flight per thread in the element-wise contiguous path of fast_* (rows that are not whole
// packs or not aligned): a 1024-thread block leaves 64 registers per thread on 64-lane CDNA, where
// two packs of 8 or 16 values with their 64-bit indices do not fit beside the rest of the kernel.
template <typename T>
constexpr int fast_unroll() {
  return sizeof(T) <= 2 ? 1 : 2;
}

// ---------------------------------------------------------------------------------------------
// Types

// Accumulator of a reduction: reduced floats in f32; u8 widened so a shuffle can carry it.
template <typename T>
struct acc_type {
  using type = hkb::compute_t<T>;
};
template <>
struct acc_type<uint8_t> {
  using type = uint32_t;
};
template <typename T>
using acc_t = typename acc_type<T>::type;

template <typename T>
HKB_DEVICE acc_t<T> to_acc(T x) {
  return static_cast<acc_t<T>>(hkb::widen(x));
}
template <typename T>
HKB_DEVICE T to_storage(acc_t<T> v) {
  if constexpr (hkb::is_reduced_float<T>::value) {
    return hkb::narrow<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

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
HKB_DEVICE float sqrt_of(float x) {
  return sqrtf(x);
}
HKB_DEVICE double sqrt_of(double x) {
  return sqrt(x);
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

// ---------------------------------------------------------------------------------------------
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

// Combines every thread's `v` with op.combine; every thread gets the result. All threads of the
// block must call it together. Combines are commutative, so the xor butterfly gives every lane the
// same bits.
template <class Op>
HKB_DEVICE typename Op::V block_reduce(typename Op::V v, const Op& op) {
  using V = typename Op::V;
  constexpr uint32_t W = HKB_WAVE_SIZE;
  __shared__ V scratch[kScratch];
  const uint32_t n = block_threads();
  const uint32_t tid = block_tid();
  if (n <= W && (n & (n - 1)) == 0) {
    // One wave, of which only lanes [0, n) exist.
    for (uint32_t m = n >> 1; m > 0; m >>= 1) v = op.combine(v, xor_shuffle<true>(v, m, n));
    return v;
  }
  if (n % W == 0) {
    for (uint32_t m = W >> 1; m > 0; m >>= 1) v = op.combine(v, xor_shuffle<false>(v, m, W));
    if (tid % W == 0) scratch[tid / W] = v;
    hkb::block_sync();
    // Every wave combines the n / W <= W partials with a second butterfly (a tree, like the
    // first), so every thread has the result without another barrier.
    const uint32_t lane = tid % W;
    V r = lane < n / W ? scratch[lane] : op.identity();
    for (uint32_t m = W >> 1; m > 0; m >>= 1) r = op.combine(r, xor_shuffle<false>(r, m, W));
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
  for (uint32_t m = W >> 1; m > 0; m >>= 1) v = op.combine(v, xor_shuffle<false>(v, m, W));
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
  V r = has ? buf[(pair / segs) * nw + (pair % segs) * g + tid % g] : op.identity();
  for (uint32_t m = g >> 1; m > 0; m >>= 1) r = op.combine(r, xor_shuffle<false>(r, m, W));
  if (has && tid % g == 0) emit(pair / segs, pair % segs, r);
}

// ---------------------------------------------------------------------------------------------
// Reduction operators: per-thread state (init/add/finish) and the cross-thread combine.

// Floating sums: Neumaier compensation per thread.
template <typename A>
struct SumFloatOp {
  using V = A;
  // The packed-row path first adds the values of a 16-byte pack pairwise (log2(pack) levels).
  static constexpr bool kPresum = HKB_FAST_PRESUM != 0;
  struct State {
    A s, c;
  };
  HKB_DEVICE V identity() const { return A(0); }
  HKB_DEVICE State init() const { return {A(0), A(0)}; }
  HKB_DEVICE void add(State& st, A x, uint64_t) const {
    const A t = st.s + x;
    if (abs_value(st.s) >= abs_value(x)) {
      st.c += (st.s - t) + x;
    } else {
      st.c += (x - t) + st.s;
    }
    st.s = t;
  }
  HKB_DEVICE V finish(const State& st) const {
    return st.s - st.s == A(0) ? st.s + st.c : st.s;  // inf/NaN: the compensation is meaningless
  }
  HKB_DEVICE V combine(V a, V b) const { return a + b; }
};

// Integer sums wrap: add in the unsigned type (signed overflow is undefined in C++).
template <typename A>
struct SumIntOp {
  using V = A;
  static constexpr bool kPresum = false;
  using U = typename std::make_unsigned<A>::type;
  using State = A;
  HKB_DEVICE V identity() const { return A(0); }
  HKB_DEVICE State init() const { return A(0); }
  HKB_DEVICE static A wrap_add(A a, A b) {
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  }
  HKB_DEVICE void add(State& st, A x, uint64_t) const { st = wrap_add(st, x); }
  HKB_DEVICE V finish(State st) const { return st; }
  HKB_DEVICE V combine(V a, V b) const { return wrap_add(a, b); }
};

template <typename A, bool kMax>
struct ExtremeOp {
  using V = A;
  static constexpr bool kPresum = false;
  using State = A;
  A neutral;  // the identity value: -inf / the minimum for max, +inf / the maximum for min
  HKB_DEVICE static A pick(A a, A b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (kMax ? b > a : b < a) return b;
    if (kMax ? a > b : a < b) return a;
    if constexpr (std::is_floating_point<A>::value) {
      // Equal: only +0/-0 can differ. max keeps +0, min keeps -0.
      return sign_bit(a) == kMax ? b : a;
    } else {
      return a;
    }
  }
  HKB_DEVICE V identity() const { return neutral; }
  HKB_DEVICE State init() const { return neutral; }
  HKB_DEVICE void add(State& st, A x, uint64_t) const { st = pick(st, x); }
  HKB_DEVICE V finish(State st) const { return st; }
  HKB_DEVICE V combine(V a, V b) const { return pick(a, b); }
};

// I: the index type, wide enough for every index of the group and for ~I(0) above them all (the
// identity's index, which an empty group reports as 0xFFFFFFFF).
template <typename A, bool kMax, typename I>
struct ArgOp {
  using V = ArgPart<A, I>;
  using State = V;
  static constexpr bool kPresum = false;  // (value, index) pairs have no pairwise pack sum
  static_assert(!kPresum, "argmin/argmax add elements one by one");
  A neutral;  // the identity value: -inf / the minimum for max, +inf / the maximum for min
  // Whether (x, i) wins over (y, j): NaN first, then the extreme value, then the smaller index.
  HKB_DEVICE static bool wins(A x, I i, A y, I j) {
    const bool xn = is_nan(x), yn = is_nan(y);
    if (xn || yn) return xn && (!yn || i < j);
    if (kMax ? x > y : x < y) return true;
    if (!(x == y)) return false;
    if constexpr (std::is_floating_point<A>::value) {
      const bool sx = sign_bit(x), sy = sign_bit(y);
      if (sx != sy) return kMax ? sy : sx;  // -0 < +0, as min/max
    }
    return i < j;
  }
  HKB_DEVICE V identity() const { return {neutral, static_cast<I>(~I(0))}; }
  HKB_DEVICE State init() const { return identity(); }
  HKB_DEVICE void add(State& st, A x, uint64_t j) const {
    if (wins(x, static_cast<I>(j), st.value, st.index)) st = {x, static_cast<I>(j)};
  }
  HKB_DEVICE V finish(State st) const { return st; }
  HKB_DEVICE V combine(V a, V b) const { return wins(b.value, b.index, a.value, a.index) ? b : a; }
};

template <typename A>
struct SoftmaxOp {
  using V = SoftmaxPart<A>;
  HKB_DEVICE V identity() const { return {-infinity<A>(), A(0)}; }
  HKB_DEVICE static A nan_max(A a, A b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return b > a ? b : a;
  }
  // p.sum rescaled to a new max m >= p.max. Equal maxima (also both -inf: an empty part) keep the
  // sum; a NaN max gives NaN.
  HKB_DEVICE static A rescaled(V p, A m) { return p.max == m ? p.sum : p.sum * exp_of(p.max - m); }
  HKB_DEVICE static void add(V& st, A x) {
    if (is_nan(x)) {
      st = {x, x};
      return;
    }
    if (x == -infinity<A>()) return;  // contributes exp(-inf) = 0, even to an all -inf prefix
    if (x > st.max) {
      st.sum *= exp_of(st.max - x);
      st.max = x;
    }
    st.sum += exp_of(x - st.max);
  }
  HKB_DEVICE V combine(V a, V b) const {
    const A m = nan_max(a.max, b.max);
    return {m, rescaled(a, m) + rescaled(b, m)};
  }
};

// ---------------------------------------------------------------------------------------------
// Row traversal

// Calls f(x[j], j) for the j in [0, n) that belong to thread `tid` of `nt`, with 16-byte loads:
// a scalar head up to 16-byte alignment, kUnroll independent packs in flight, a scalar tail.
template <int kUnroll, typename T, typename F>
HKB_DEVICE void visit_contiguous(const T* x, uint64_t n, uint32_t tid, uint32_t nt, F&& f) {
  constexpr int V = 16 / sizeof(T);
  using P = hkb::Pack<T, V>;
  const uint64_t misalign = (reinterpret_cast<uintptr_t>(x) % 16) / sizeof(T);
  uint64_t head = misalign == 0 ? 0 : V - misalign;
  if (head > n) head = n;
  for (uint64_t j = tid; j < head; j += nt) f(x[j], j);  // head < V, but nt may be smaller
  const uint64_t packs = (n - head) / V;
  const P* xp = reinterpret_cast<const P*>(x + head);
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
#pragma unroll
        for (int k = 0; k < V; ++k) f(buf[u].v[k], head + q * V + k);
      }
    }
  }
  for (uint64_t j = head + packs * V + tid; j < n; j += nt) f(x[j], j);
}

// y[j] = f(x[j]) for the j of thread `tid`, last elements first (the end of a row that was just
// read is the part most likely still in cache). 16-byte accesses when x and y share their offset
// within 16 bytes, scalar otherwise. x may equal y.
template <typename T, typename F>
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
  for (uint64_t b = tid; b < packs; b += static_cast<uint64_t>(kUnroll) * nt) {
    P buf[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint64_t r = b + static_cast<uint64_t>(u) * nt;
      if (r < packs) buf[u] = xp[packs - 1 - r];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
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
// fast_*: one block per output over the reordered layout.

// The reduced group of E elements spans the trailing dims [k, nd). When those dims collapse into
// one stride (contiguous, or a single reduced dim of any stride, size-1 dims ignored), element j of
// a group sits at base + j * stride.
struct InnerShape {
  uint64_t k;
  bool found;
  bool collapsible;
  uint64_t stride;
};

HKB_DEVICE InnerShape split_inner(uint64_t nd, const size_t* dims, const size_t* strides,
                                  uint64_t group) {
  InnerShape s{nd, false, true, 0};
  uint64_t prod = 1;
  while (s.k > 0 && prod != group) {
    --s.k;
    prod *= dims[s.k];
  }
  s.found = prod == group;
  bool first = true;
  uint64_t expected = 0;
  for (uint64_t d = nd; d-- > s.k;) {
    if (dims[d] == 1) continue;
    if (first) {
      s.stride = strides[d];
      first = false;
    } else if (strides[d] != expected) {
      s.collapsible = false;
    }
    expected = strides[d] * dims[d];
  }
  return s;
}

// Work split: blocks [0, min(gridDim.x, kFastBlocks)) do the work and the others return before
// they read anything (candle launches a block per output; a few long-lived blocks keep their loads
// streaming where a short-lived block per output pays its start and its reduction tail each time).
// Each working block takes a chunk of consecutive outputs (ceil(outputs / blocks)).

// Adds the V values of a pack (elements c, c + 1, ... of the group) to the state.
template <class Op, typename T, int V>
HKB_DEVICE void add_pack(const Op& op, typename Op::State& st, const hkb::Pack<T, V>& p,
                         uint32_t c) {
  if constexpr (Op::kPresum) {
    acc_t<T> t[V];
#pragma unroll
    for (int k = 0; k < V; ++k) t[k] = to_acc(p.v[k]);
#pragma unroll
    for (int w = V / 2; w > 0; w >>= 1) {
#pragma unroll
      for (int k = 0; k < w; ++k) t[k] = t[k] + t[k + w];
    }
    op.add(st, t[0], c);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) op.add(st, to_acc(p.v[k]), c + k);
  }
}

// Rows [first, first + rows) of a contiguous, 16-byte aligned layout whose rows are P whole
// packs: together packs [first * P, (first + rows) * P). Item i of thread tid is pack i * nt + tid
// of that range, so every load of the block is coalesced and one row follows the other. seg =
// min(P, nt) threads share a row (P a multiple of nt, or P and nt powers of two), each reading
// P / seg of its packs; kDepth items are loaded ahead of their use, across row boundaries. A pass
// is nt / seg rows side by side; the segment reductions of kFastRows passes share one barrier
// (segment_put / segment_finish), while the next packs are in flight. Within a thread the
// elements of a row come in order. Counts are 32-bit: the caller keeps rows * P below 2^31.
template <typename T, class Op, class Store>
__device__ __noinline__ uint32_t reduce_packed_rows(const T* src, uint32_t P, uint32_t seg,
                                                    uint64_t first, uint32_t rows, Op op,
                                                    Store store, uint32_t parity) {
  constexpr int V = 16 / sizeof(T);
  constexpr int kDepth = fast_depth<T>();
  constexpr int R = kFastRows;
  using Pk = hkb::Pack<T, V>;
  using Part = typename Op::V;
  const uint32_t tid = block_tid();
  const uint32_t nt = block_threads();
  const uint32_t per_row = P / seg;
  const uint32_t rows_per_pass = nt / seg;
  const uint32_t items = (rows + rows_per_pass - 1) / rows_per_pass * per_row;
  // Items of this thread inside the range: i * nt + tid < rows * P.
  const uint32_t limit = rows * P;
  const uint32_t mine = limit > tid ? (limit - tid + nt - 1) / nt : 0;
  const Pk* xp = reinterpret_cast<const Pk*>(src) + first * P + tid;
  Pk buf[kDepth] = {};
#pragma unroll
  for (int u = 0; u < kDepth; ++u) {
    if (static_cast<uint32_t>(u) < mine) buf[u] = xp[static_cast<uint64_t>(u) * nt];
  }
  auto st = op.init();
  uint32_t j = 0;                        // item within the row
  uint32_t slot = 0;                     // pass within the batch of R
  uint32_t pass0 = 0;                    // first pass of the batch
  const uint32_t col = (tid % seg) * V;  // first element of the first item within the row
  const uint32_t col_step = seg * V;
  auto emit = [&](uint32_t k, uint32_t s, const Part& r) {
    const uint32_t row = (pass0 + k) * rows_per_pass + s;
    if (row < rows) store(first + row, r);
  };
  for (uint32_t i0 = 0; i0 < items; i0 += kDepth) {
#pragma unroll
    for (int u = 0; u < kDepth; ++u) {
      const uint32_t i = i0 + u;
      if (i < items) {
        const Pk cur = buf[u];
        if (i + kDepth < mine) buf[u] = xp[static_cast<uint64_t>(i + kDepth) * nt];
        if (i < mine) add_pack(op, st, cur, col + j * col_step);
        if (++j == per_row) {
          segment_put<false>(op.finish(st), op, seg, slot, fast_scratch<Part>(parity), emit);
          st = op.init();
          j = 0;
          if (++slot == static_cast<uint32_t>(R)) {
            segment_finish(op, seg, R, fast_scratch<Part>(parity), emit);
            parity ^= 1u;
            slot = 0;
            pass0 += R;
          }
        }
      }
    }
  }
  if (slot != 0) {
    segment_finish(op, seg, slot, fast_scratch<Part>(parity), emit);
    parity ^= 1u;
  }
  return parity;
}

// `op` for the general paths; `packed_op` (the same reduction, possibly with 32-bit indices) for
// reduce_packed_rows, which 1-byte types skip: three packs of 16 values each in flight exceed the
// registers of a 1024-thread block on 64-lane CDNA.
template <typename T, class Op, class PackedOp, class Store>
__device__ void fast_reduce(uint64_t src_numel, uint64_t group, uint64_t nd, const size_t* info,
                            const T* src, const Op& op, const PackedOp& packed_op, Store store) {
  constexpr uint32_t V = 16 / sizeof(T);
  if (blockIdx.x >= kFastBlocks) return;
  const uint64_t n_out = group == 0 ? gridDim.x : (src_numel + group - 1) / group;
  const uint32_t blocks = gridDim.x < kFastBlocks ? gridDim.x : kFastBlocks;
  // This block's chunk of outputs: [begin, end).
  const uint64_t per_chunk = (n_out + blocks - 1) / blocks;
  const uint64_t begin = blockIdx.x * per_chunk;
  if (begin >= n_out) return;
  const uint64_t end = n_out - begin < per_chunk ? n_out : begin + per_chunk;
  const size_t* dims = info;
  const size_t* strides = info + nd;
  const uint32_t tid = block_tid();
  const uint32_t nt = block_threads();
  uint32_t parity = 0;
  if constexpr (sizeof(T) > 1) {
    // The packed-row path: threads per row from the arguments alone (0 where it does not apply),
    // so the compiler keeps it in uniform registers; the layout only decides whether it is taken.
    const uint64_t P = group / V;
    uint32_t seg = 0;
    if (group != 0 && group % V == 0 && P <= 0x7FFFFFFFull && src_numel % group == 0 &&
        hkb::is_aligned(src, 16)) {
      if ((nt & (nt - 1)) != 0) {
        // Blocks that are not a power of two take the general path.
      } else if (P >= nt) {
        if (P % nt == 0) seg = nt;
      } else if ((P & (P - 1)) == 0) {
        seg = static_cast<uint32_t>(P);
      }
    }
    if (seg != 0 && hkb::is_contiguous(nd, dims, strides)) {
      // Pieces of rows * P below 2^31 for reduce_packed_rows' 32-bit counts.
      const uint64_t most = 0x7FFFFFFFull / P;
      for (uint64_t first = begin; first < end; first += most) {
        const uint64_t rows = end - first < most ? end - first : most;
        parity = reduce_packed_rows(src, static_cast<uint32_t>(P), seg, first,
                                    static_cast<uint32_t>(rows), packed_op, store, parity);
      }
      return;
    }
  }
  // The other layouts: the chunk's outputs kFastRows at a time, each over the whole block, then
  // one reduction for all of them.
  constexpr int R = kFastRows;
  using Part = typename Op::V;
  const InnerShape inner = split_inner(nd, dims, strides, group);
  {
    uint64_t o0 = begin;  // first output of the batch
    uint32_t slot = 0;    // output within the batch
    auto emit = [&](uint32_t k, uint32_t, const Part& r) { store(o0 + k, r); };
    for (uint64_t o = begin; o < end; ++o) {
      auto st = op.init();
      const uint64_t first = o * group;
      const uint64_t count =
          group == 0 ? 0 : (src_numel - first < group ? src_numel - first : group);
      auto add = [&](T x, uint64_t j) { op.add(st, to_acc(x), j); };
      if (count != 0) {
        // Without trailing dims that hold exactly the group, element j is logical element first + j
        // of the whole layout.
        const uint64_t base = inner.found ? hkb::strided_offset(o, inner.k, dims, strides) : 0;
        if (inner.found && inner.collapsible && inner.stride == 1) {
          visit_contiguous<fast_unroll<T>()>(src + base, count, tid, nt, add);
        } else if (inner.found && inner.collapsible) {
          for (uint64_t j = tid; j < count; j += nt) add(src[base + j * inner.stride], j);
        } else {
          const uint64_t k = inner.found ? inner.k : 0;
          const uint64_t skip = inner.found ? 0 : first;
          for (uint64_t j = tid; j < count; j += nt) {
            add(src[base + hkb::strided_offset(skip + j, nd - k, dims + k, strides + k)], j);
          }
        }
      }
      segment_put<true>(op.finish(st), op, nt, slot, fast_scratch<Part>(parity), emit);
      if (++slot == static_cast<uint32_t>(R) || o + 1 == end) {
        segment_finish(op, nt, slot, fast_scratch<Part>(parity), emit);
        parity ^= 1u;
        slot = 0;
        o0 = o + 1;
      }
    }
  }
}

template <typename T>
__device__ void fast_sum(size_t src_numel, size_t group, size_t nd, const size_t* info,
                         const T* src, T* dst) {
  using A = acc_t<T>;
  auto store = [dst](uint64_t o, A r) { dst[o] = to_storage<T>(r); };
  if constexpr (std::is_floating_point<A>::value) {
    fast_reduce(src_numel, group, nd, info, src, SumFloatOp<A>{}, SumFloatOp<A>{}, store);
  } else {
    fast_reduce(src_numel, group, nd, info, src, SumIntOp<A>{}, SumIntOp<A>{}, store);
  }
}

template <typename T, bool kMax>
__device__ void fast_extreme(size_t src_numel, size_t group, size_t nd, const size_t* info,
                             const T* src, T* dst) {
  using A = acc_t<T>;
  const ExtremeOp<A, kMax> op{kMax ? lowest<T>() : highest<T>()};
  fast_reduce(src_numel, group, nd, info, src, op, op,
              [dst](uint64_t o, A r) { dst[o] = to_storage<T>(r); });
}

// Indices are 64-bit in the general paths (any group) and 32-bit in the packed-row path (groups
// below 2^32 elements).
template <typename T, bool kMax>
__device__ void fast_arg(size_t src_numel, size_t group, size_t nd, const size_t* info,
                         const T* src, uint32_t* dst) {
  using A = acc_t<T>;
  const ArgOp<A, kMax, uint64_t> op{kMax ? lowest<T>() : highest<T>()};
  const ArgOp<A, kMax, uint32_t> packed_op{op.neutral};
  fast_reduce(src_numel, group, nd, info, src, op, packed_op,
              [dst](uint64_t o, auto r) { dst[o] = static_cast<uint32_t>(r.index); });
}

// ---------------------------------------------------------------------------------------------
// sum: atomic scatter-add.

HKB_DEVICE void atomic_accumulate(float* p, float x) {
  hkb::atomic_add(p, x);
}
HKB_DEVICE void atomic_accumulate(double* p, double x) {
  hkb::atomic_add(p, x);
}
HKB_DEVICE void atomic_accumulate(uint32_t* p, uint32_t x) {
  hkb::atomic_add(p, x);
}
// 16-bit floats: compare-and-swap on the aligned 32-bit word holding the element (little-endian:
// the element at the lower address is the low half).
template <typename H>
HKB_DEVICE void atomic_accumulate_16(H* p, float x) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  uint32_t* word = reinterpret_cast<uint32_t*>(addr & ~static_cast<uintptr_t>(3));
  const uint32_t shift = (addr & 2) != 0 ? 16u : 0u;
  uint32_t seen = *reinterpret_cast<volatile uint32_t*>(word);
  while (true) {
    const H cur{static_cast<uint16_t>(seen >> shift)};
    const H next = hkb::from_float<H>(hkb::to_float(cur) + x);
    const uint32_t desired =
        (seen & ~(0xFFFFu << shift)) | (static_cast<uint32_t>(next.bits) << shift);
    const uint32_t prev = hkb::atomic_cas(word, seen, desired);
    if (prev == seen) return;
    seen = prev;
  }
}
HKB_DEVICE void atomic_accumulate(hkb::f16* p, hkb::f16 x) {
  atomic_accumulate_16(p, hkb::to_float(x));
}
HKB_DEVICE void atomic_accumulate(hkb::bf16* p, hkb::bf16 x) {
  atomic_accumulate_16(p, hkb::to_float(x));
}

template <typename T>
__device__ void sum_scatter(size_t numel, size_t nd, size_t nsd, const size_t* info, const T* inp,
                            T* out) {
  const size_t* dims = info;
  const size_t* strides = info + nd;
  const size_t* sum_len = info + 2 * nd;
  const size_t* sum_stride = info + 2 * nd + nsd;
  const bool contiguous = hkb::is_contiguous(nd, dims, strides);
  const uint64_t step = hkb::grid_stride();
  for (uint64_t i = hkb::global_thread_index(); i < numel; i += step) {
    uint64_t di = i;
    for (uint64_t k = 0; k < nsd; ++k) {
      const uint64_t s = sum_stride[k];
      const uint64_t pre = di / s;
      di = (pre / sum_len[k]) * s + (di - pre * s);
    }
    const T x = inp[contiguous ? i : hkb::strided_offset(i, nd, dims, strides)];
    atomic_accumulate(out + di, x);
  }
}

// ---------------------------------------------------------------------------------------------
// softmax over rows of n_cols contiguous elements, one block per row.

template <typename T>
__device__ void softmax(const T* src, T* dst, int n_cols) {
  using A = hkb::compute_t<T>;
  if (n_cols <= 0) return;
  const uint64_t n = static_cast<uint64_t>(n_cols);
  const uint32_t tid = block_tid();
  const uint32_t nt = block_threads();
  const T* x = src + blockIdx.x * n;
  T* y = dst + blockIdx.x * n;
  const SoftmaxOp<A> op;
  SoftmaxPart<A> st{-infinity<A>(), A(0)};
  visit_contiguous<kUnroll>(x, n, tid, nt, [&](T v, uint64_t) { op.add(st, hkb::widen(v)); });
  const SoftmaxPart<A> row = block_reduce(st, op);
  const A inv = A(1) / row.sum;
  const A m = row.max;
  map_row_reverse(x, y, n, tid, nt,
                  [&](T v) { return hkb::narrow<T>(exp_of(hkb::widen(v) - m) * inv); });
}

// ---------------------------------------------------------------------------------------------
// rmsnorm / layernorm, one block per row. When every pointer is 16-byte aligned and n_cols a whole
// number of 16-byte packs, each thread keeps its first kCached packs in registers between the
// passes (a row of up to kCached * 16 bytes * blockDim is read from memory once); the rest is
// re-read.

constexpr int kCached = 4;

template <typename A>
struct PlusOp {
  using V = A;
  HKB_DEVICE V identity() const { return A(0); }
  HKB_DEVICE V combine(V a, V b) const { return a + b; }
};

// Row access for the norms: the vector path or the scalar one, both with the same thread-to-element
// mapping in every pass.
template <typename T>
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

  HKB_DEVICE NormRow(const T* x_, T* y_, const T* alpha_, const T* beta_, uint64_t n_)
      : x(x_), y(y_), alpha(alpha_), beta(beta_), n(n_), tid(block_tid()), nt(block_threads()) {
    vec = n % V == 0 && hkb::is_aligned(x, 16) && hkb::is_aligned(y, 16) &&
          (alpha == nullptr || hkb::is_aligned(alpha, 16)) &&
          (beta == nullptr || hkb::is_aligned(beta, 16));
  }
  // First pass: loads (and caches) the row, f(value) per element.
  template <typename F>
  HKB_DEVICE void load(F&& f) {
    if (!vec) {
      for (uint64_t j = tid; j < n; j += nt) f(to_acc(x[j]));
      return;
    }
    const P* xp = reinterpret_cast<const P*>(x);
    const uint64_t packs = n / V;
#pragma unroll
    for (int c = 0; c < kCached; ++c) {
      const uint64_t q = tid + static_cast<uint64_t>(c) * nt;
      if (q < packs) cache[c] = xp[q];
    }
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
        y[j] = to_storage<T>(g(to_acc(x[j]), a, b));
      }
      return;
    }
    const P* xp = reinterpret_cast<const P*>(x);
    const P* ap = reinterpret_cast<const P*>(alpha);
    const P* bp = reinterpret_cast<const P*>(beta);
    P* yp = reinterpret_cast<P*>(y);
    const uint64_t packs = n / V;
    auto emit = [&](const P& p, uint64_t q) {
      P a, b, o;
      if (ap != nullptr) a = ap[q];
      if (bp != nullptr) b = bp[q];
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const A av = ap != nullptr ? to_acc(a.v[k]) : A(1);
        const A bv = bp != nullptr ? to_acc(b.v[k]) : A(0);
        o.v[k] = to_storage<T>(g(to_acc(p.v[k]), av, bv));
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

template <typename T>
__device__ void rmsnorm(const T* src, T* dst, const T* alpha, int n_cols, float eps) {
  using A = acc_t<T>;
  if (n_cols <= 0) return;
  const uint64_t n = static_cast<uint64_t>(n_cols);
  NormRow<T> row(src + blockIdx.x * n, dst + blockIdx.x * n, alpha, nullptr, n);
  A sq = 0;
  row.load([&](A v) { sq += v * v; });
  sq = block_reduce(sq, PlusOp<A>{});
  const A inv = A(1) / sqrt_of(sq / static_cast<A>(n) + static_cast<A>(eps));
  row.write([&](A v, A a, A) { return v * inv * a; });
}

template <typename T>
__device__ void layernorm(const T* src, T* dst, const T* alpha, const T* beta, int n_cols,
                          float eps) {
  using A = acc_t<T>;
  if (n_cols <= 0) return;
  const uint64_t n = static_cast<uint64_t>(n_cols);
  NormRow<T> row(src + blockIdx.x * n, dst + blockIdx.x * n, alpha, beta, n);
  A s = 0;
  row.load([&](A v) { s += v; });
  const A mean = block_reduce(s, PlusOp<A>{}) / static_cast<A>(n);
  A dev = 0;
  row.reread([&](A v) { dev += (v - mean) * (v - mean); });
  const A var = block_reduce(dev, PlusOp<A>{}) / static_cast<A>(n);
  const A inv = A(1) / sqrt_of(var + static_cast<A>(eps));
  row.write([&](A v, A a, A b) { return (v - mean) * inv * a + b; });
}

// ---------------------------------------------------------------------------------------------
// Rotary embeddings. One pair per loop step; indices in 64 bits with 32-bit divisions while the
// dividend fits.

HKB_DEVICE void divmod(uint64_t a, uint32_t b, uint64_t& q, uint64_t& r) {
  if (a <= 0xFFFFFFFFull) {
    const uint32_t a32 = static_cast<uint32_t>(a);
    const uint32_t q32 = a32 / b;
    q = q32;
    r = a32 - q32 * b;
  } else {
    q = a / b;
    r = a - q * b;
  }
}
HKB_DEVICE uint64_t div64(uint64_t a, uint64_t b) {
  if (a <= 0xFFFFFFFFull && b <= 0xFFFFFFFFull) {
    return static_cast<uint32_t>(a) / static_cast<uint32_t>(b);
  }
  return a / b;
}

template <typename T>
HKB_DEVICE void rotate(const T* src, const T* cos, const T* sin, T* dst, uint64_t i1, uint64_t i2,
                       uint64_t cs) {
  const auto a = hkb::widen(src[i1]);
  const auto b = hkb::widen(src[i2]);
  const auto c = hkb::widen(cos[cs]);
  const auto s = hkb::widen(sin[cs]);
  dst[i1] = hkb::narrow<T>(a * c - b * s);
  dst[i2] = hkb::narrow<T>(a * s + b * c);
}

// Interleaved pairs (x[2i], x[2i+1]); cos/sin index = pair index within a (b, h) row of td/2.
template <typename T>
__device__ void rope_i(const T* src, const T* cos, const T* sin, T* dst, uint32_t bh, uint32_t td,
                       uint32_t stride_b) {
  const uint32_t half_td = td / 2;
  if (half_td == 0) return;
  const uint64_t pairs = static_cast<uint64_t>(bh) * td / 2;
  const uint64_t step = hkb::grid_stride();
  for (uint64_t p = hkb::global_thread_index(); p < pairs; p += step) {
    uint64_t row, cs;
    divmod(p, half_td, row, cs);
    if (stride_b != 0) cs += div64(2 * p, stride_b) * half_td;
    rotate(src, cos, sin, dst, 2 * p, 2 * p + 1, cs);
  }
}

// Halves (x[i], x[i + d/2]) of each (b, h, t) vector of d; src is (b, h, t, d).
template <typename T>
__device__ void rope(const T* src, const T* cos, const T* sin, T* dst, uint32_t bh, uint32_t td,
                     uint32_t d, uint32_t stride_b) {
  const uint32_t half_td = td / 2;
  const uint32_t half_d = d / 2;
  if (half_td == 0 || half_d == 0) return;
  const uint64_t pairs = static_cast<uint64_t>(bh) * td / 2;
  const uint64_t step = hkb::grid_stride();
  for (uint64_t p = hkb::global_thread_index(); p < pairs; p += step) {
    uint64_t i_bh, i_td, i_t, i_d;
    divmod(p, half_td, i_bh, i_td);
    divmod(i_td, half_d, i_t, i_d);
    const uint64_t i1 = i_bh * td + i_t * d + i_d;
    uint64_t cs = i_td;  // = i_t * d/2 + i_d
    if (stride_b != 0) cs += div64(2 * p, stride_b) * half_td;
    rotate(src, cos, sin, dst, i1, i1 + half_d, cs);
  }
}

// Halves of each (b, t, h) vector of d; src is (b, t, h, d), cos/sin are (t, d/2) or (b, t, d/2).
template <typename T>
__device__ void rope_thd(const T* src, const T* cos, const T* sin, T* dst, uint32_t b, uint32_t t,
                         uint32_t h, uint32_t d, uint32_t stride_b) {
  const uint32_t half_d = d / 2;
  if (half_d == 0 || t == 0 || h == 0) return;
  const uint64_t pairs = static_cast<uint64_t>(b) * t * h * d / 2;
  const uint64_t half_td = static_cast<uint64_t>(t) * d / 2;
  const uint64_t step = hkb::grid_stride();
  for (uint64_t p = hkb::global_thread_index(); p < pairs; p += step) {
    uint64_t i_bth, i_d, i_bt, i_h, i_b, i_t;
    divmod(p, half_d, i_bth, i_d);
    divmod(i_bth, h, i_bt, i_h);
    divmod(i_bt, t, i_b, i_t);
    const uint64_t i1 = i_bth * d + i_d;
    uint64_t cs = i_t * half_d + i_d;
    if (stride_b != 0) cs += div64(2 * p, stride_b) * half_td;
    rotate(src, cos, sin, dst, i1, i1 + half_d, cs);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entry points: candle's names and parameter lists. Every kernel may run with 1024 threads per
// block (candle launches fast_*, the norms and rope so), so the register budget is bounded for it:
// without the bound nvcc gives fast_sum_f32 66 registers and a 1024-thread launch fails.

#define HKB_REDUCE_GLOBAL HKB_GLOBAL __launch_bounds__(1024)

// fast_*: 1024-thread blocks resident per multiprocessor (on NVIDIA a register cap of 32 for 2),
// per dtype: two let one block's loads run while the other reduces or starts; the 8-byte and u8
// paths need more registers than two blocks leave.
#define HKB_REDUCE_FAST_DTYPES(X) \
  X(bf16, hkb::bf16, 2)           \
  X(f16, hkb::f16, 2)             \
  X(f32, float, 2) X(f64, double, 1) X(u8, uint8_t, 1) X(u32, uint32_t, 2) X(i64, int64_t, 1)

#define HKB_FAST_ARGS                                                              \
  const size_t src_numel, const size_t el_to_sum_per_block, const size_t num_dims, \
      const size_t *info
#define HKB_FAST(TAG, T, BLOCKS)                                                      \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_sum_##TAG(HKB_FAST_ARGS, const T* src, T* dst) {                           \
    fast_sum<T>(src_numel, el_to_sum_per_block, num_dims, info, src, dst);            \
  }                                                                                   \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_min_##TAG(HKB_FAST_ARGS, const T* src, T* dst) {                           \
    fast_extreme<T, false>(src_numel, el_to_sum_per_block, num_dims, info, src, dst); \
  }                                                                                   \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_max_##TAG(HKB_FAST_ARGS, const T* src, T* dst) {                           \
    fast_extreme<T, true>(src_numel, el_to_sum_per_block, num_dims, info, src, dst);  \
  }                                                                                   \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_argmin_##TAG(HKB_FAST_ARGS, const T* src, uint32_t* dst) {                 \
    fast_arg<T, false>(src_numel, el_to_sum_per_block, num_dims, info, src, dst);     \
  }                                                                                   \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_argmax_##TAG(HKB_FAST_ARGS, const T* src, uint32_t* dst) {                 \
    fast_arg<T, true>(src_numel, el_to_sum_per_block, num_dims, info, src, dst);      \
  }
HKB_REDUCE_FAST_DTYPES(HKB_FAST)

#define HKB_SUM(TAG, T)                                                                         \
  HKB_REDUCE_GLOBAL void sum_##TAG(const size_t numel, const size_t num_dims,                   \
                                   const size_t num_sum_dims, const size_t* info, const T* inp, \
                                   T* out) {                                                    \
    sum_scatter<T>(numel, num_dims, num_sum_dims, info, inp, out);                              \
  }
HKB_DTYPES_FLOAT(HKB_SUM)
HKB_SUM(u32, uint32_t)

#define HKB_ROW_OPS(TAG, T)                                                                    \
  HKB_REDUCE_GLOBAL void softmax_##TAG(const T* src, T* dst, const int n_cols) {               \
    softmax<T>(src, dst, n_cols);                                                              \
  }                                                                                            \
  HKB_REDUCE_GLOBAL void rmsnorm_##TAG(const T* src, T* dst, const T* alpha, const int n_cols, \
                                       const int block_size, const float eps) {                \
    rmsnorm<T>(src, dst, alpha, n_cols, eps);                                                  \
  }                                                                                            \
  HKB_REDUCE_GLOBAL void layernorm_##TAG(const T* src, T* dst, const T* alpha, const T* beta,  \
                                         const int n_cols, const int block_size,               \
                                         const float eps) {                                    \
    layernorm<T>(src, dst, alpha, beta, n_cols, eps);                                          \
  }                                                                                            \
  HKB_REDUCE_GLOBAL void rope_i_##TAG(const T* src, const T* cos, const T* sin, T* dst,        \
                                      const uint32_t bh, const uint32_t td,                    \
                                      const uint32_t stride_b) {                               \
    rope_i<T>(src, cos, sin, dst, bh, td, stride_b);                                           \
  }                                                                                            \
  HKB_REDUCE_GLOBAL void rope_##TAG(const T* src, const T* cos, const T* sin, T* dst,          \
                                    const uint32_t bh, const uint32_t td, const uint32_t d,    \
                                    const uint32_t stride_b) {                                 \
    rope<T>(src, cos, sin, dst, bh, td, d, stride_b);                                          \
  }                                                                                            \
  HKB_REDUCE_GLOBAL void rope_thd_##TAG(const T* src, const T* cos, const T* sin, T* dst,      \
                                        const uint32_t b, const uint32_t t, const uint32_t h,  \
                                        const uint32_t d, const uint32_t stride_b) {           \
    rope_thd<T>(src, cos, sin, dst, b, t, h, d, stride_b);                                     \
  }
HKB_DTYPES_FLOAT(HKB_ROW_OPS)
