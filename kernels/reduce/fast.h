// fast_{sum,min,max,argmin,argmax}: one block per output over the reordered layout.
#pragma once

#include "rows.h"

namespace {

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

// Work split: the first blocks, as many as the multiprocessors hold at once (tuning.h), do the work
// and the others return before they read anything (candle launches a block per output; a few
// long-lived blocks keep their loads streaming where a short-lived block per output pays its start
// and its reduction tail each time). Each working block takes a chunk of consecutive outputs
// (ceil(outputs / blocks)).

// Adds the V values of a pack (elements c, c + 1, ... of the group; the thread's pack j of the
// row in reduce_packed_rows) to the state.
template <class Op, typename T, int V>
HKB_DEVICE void add_pack(const Op& op, typename Op::State& st, const hkb::Pack<T, V>& p, uint32_t c,
                         uint32_t = 0) {
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

// The pack's values as 32-bit words of two (HalfKeyExtremeOp).
template <typename T, bool kMax, int V>
HKB_DEVICE void add_pack(const HalfKeyExtremeOp<T, kMax>& op,
                         typename HalfKeyExtremeOp<T, kMax>::State& st, const hkb::Pack<T, V>& p,
                         uint32_t, uint32_t) {
  uint32_t w[V / 2];
  __builtin_memcpy(w, &p, sizeof(w));
#pragma unroll
  for (int k = 0; k < V / 2; ++k) op.add_word(st, w[k]);
}

// The same with each word's count within the thread's row (HalfKeyArgOp): j * V / 2 + k.
template <typename T, bool kMax, int V>
HKB_DEVICE void add_pack(const HalfKeyArgOp<T, kMax>& op, typename HalfKeyArgOp<T, kMax>::State& st,
                         const hkb::Pack<T, V>& p, uint32_t, uint32_t j) {
  uint32_t w[V / 2];
  __builtin_memcpy(w, &p, sizeof(w));
#pragma unroll
  for (int k = 0; k < V / 2; ++k) op.add_word(st, w[k], j * (V / 2) + k);
}

// A thread's result for one row of reduce_packed_rows: op.finish, except for HalfKeyArgOp, whose
// finish takes the row's geometry, and which reads the thread's packs of the row (row()[j * seg],
// j < per_row, elements col + j * col_step on) again one value at a time where it saw a NaN.
template <class Op, class Row>
HKB_DEVICE typename Op::V finish_row(const Op& op, const typename Op::State& st, const Row&,
                                     uint32_t, uint32_t, uint32_t, uint32_t) {
  return op.finish(st);
}
template <typename T, bool kMax, class Row>
HKB_DEVICE typename HalfKeyArgOp<T, kMax>::V finish_row(
    const HalfKeyArgOp<T, kMax>& op, const typename HalfKeyArgOp<T, kMax>::State& st,
    const Row& row, uint32_t per_row, uint32_t seg, uint32_t col, uint32_t col_step) {
  constexpr int V = 16 / sizeof(T);
  if (!op.saw_nan(st)) return op.template finish<V / 2>(st, col, col_step);
  const typename HalfKeyArgOp<T, kMax>::Exact exact;
  auto s = exact.init();
  const auto* x = row();
  for (uint32_t j = 0; j < per_row; ++j) add_pack(exact, s, x[j * seg], col + j * col_step);
  return s;
}

// Whether `op` takes rows of per_row packs a thread in reduce_packed_rows (the general path takes
// the others).
template <class Op>
HKB_DEVICE bool packed_rows_fit(const Op&, uint64_t) {
  return true;
}
template <typename T, bool kMax>
HKB_DEVICE bool packed_rows_fit(const HalfKeyArgOp<T, kMax>&, uint64_t per_row) {
  return per_row * (8 / sizeof(T)) <= HalfKeyArgOp<T, kMax>::kMaxWords;
}

// Rows [first, first + rows) of a contiguous, 16-byte aligned layout whose rows are P whole
// packs. seg threads (a power of two dividing nt and P, or P itself below nt) share a row, each
// reading P / seg of its packs; a pass is nt / seg rows side by side. Item (pass, k) of thread tid
// is pack k * seg + tid % seg of row pass * (nt / seg) + tid / seg, so every warp load reads
// consecutive packs. kDepth items are loaded ahead of their use, across row boundaries. The
// segment reductions of kFastRows passes share one barrier (segment_put / segment_finish), while
// the next packs are in flight. Within a thread the elements of a row come in order. Counts are
// 32-bit: the caller keeps rows * P below 2^31.
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
  // This thread's items are those of its rows below `rows`: a prefix of `mine` items.
  const uint32_t row0 = tid / seg;
  const uint32_t mine =
      rows > row0 ? (rows - row0 + rows_per_pass - 1) / rows_per_pass * per_row : 0;
  const Pk* xp = reinterpret_cast<const Pk*>(src) + first * P + row0 * P + tid % seg;
  // Pack offset of the next item to load: seg a step within a row, the other rows of the pass
  // skipped at the end of one.
  const uint32_t wrap = (rows_per_pass - 1) * P;
  uint32_t ld_off = 0, ld_k = 0;
  Pk buf[kDepth] = {};
#pragma unroll
  for (int u = 0; u < kDepth; ++u) {
    if (static_cast<uint32_t>(u) < mine) {
      buf[u] = xp[ld_off];
      ld_off += ++ld_k == per_row ? seg + wrap : seg;
      ld_k = ld_k == per_row ? 0 : ld_k;
    }
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
        if (i + kDepth < mine) {
          buf[u] = xp[ld_off];
          ld_off += ++ld_k == per_row ? seg + wrap : seg;
          ld_k = ld_k == per_row ? 0 : ld_k;
        }
        if (i < mine) add_pack(op, st, cur, col + j * col_step, j);
        if (++j == per_row) {
          const auto row = [&] {
            return xp + static_cast<uint64_t>((pass0 + slot) * rows_per_pass) * P;
          };
          segment_put<false>(finish_row(op, st, row, per_row, seg, col, col_step), op, seg, slot,
                             fast_scratch<Part>(parity), emit);
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
// short_row_bytes: rows of at most that many bytes take one busy 1024-thread block a
// multiprocessor (tuning.h).
template <typename T, class Op, class PackedOp, class Store>
__device__ void fast_reduce(uint64_t src_numel, uint64_t group, uint64_t nd, const size_t* info,
                            const T* src, const Op& op, const PackedOp& packed_op, Store store,
                            uint64_t short_row_bytes = hkb::tuning::kFastShortRowBytes) {
  constexpr uint32_t V = 16 / sizeof(T);
  if (blockIdx.x >= kFastBlocks) return;  // idle on the index alone
  // Blocks below 1024 threads keep the fixed count: many of them fit a multiprocessor.
  const bool short_rows = group * sizeof(T) <= short_row_bytes;
  uint32_t per_mp = hkb::tuning::kFastThreadsPerMP / 1024;
  if (per_mp > 1 && short_rows) per_mp = 1;
  uint32_t blocks = block_threads() >= 1024 ? hkb::multiprocessors() * per_mp : kFastBlocks;
  if (hkb::tuning::kFastShortRowsHalfSM && block_threads() < 1024 && short_rows) {
    uint32_t half = hkb::tuning::kFastThreadsPerMP / 2 / block_threads();
    if (half == 0) half = 1;
    if (blocks > hkb::multiprocessors() * half) blocks = hkb::multiprocessors() * half;
  }
  if (blocks > kFastBlocks) blocks = kFastBlocks;
  if (blocks > gridDim.x) blocks = gridDim.x;
  if (blocks == 0) blocks = 1;
  if (blockIdx.x >= blocks) return;
  const uint64_t n_out = group == 0 ? gridDim.x : (src_numel + group - 1) / group;
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
      // Fewer threads a row, each with more of its packs, where a segment stays whole waves.
      while (seg > HKB_WAVE_SIZE && P / seg < static_cast<uint64_t>(fast_row_packs<T>())) seg >>= 1;
    }
    if (seg != 0 && packed_rows_fit(packed_op, P / seg) && hkb::is_contiguous(nd, dims, strides)) {
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
  auto store = [dst](uint64_t o, A r) { dst[o] = hkb::from_acc<T>(r); };
  if constexpr (std::is_floating_point<A>::value) {
    fast_reduce(src_numel, group, nd, info, src, SumFloatOp<A>{}, SumFloatOp<A>{}, store);
  } else {
    fast_reduce(src_numel, group, nd, info, src, SumIntOp<A>{}, SumIntOp<A>{}, store);
  }
}

// Floats (f32, f16, bf16) compare as order keys (ops.h), the others as values.
template <typename T>
constexpr bool kKeyed = std::is_same<acc_t<T>, float>::value;

template <typename T, bool kMax>
__device__ void fast_extreme(size_t src_numel, size_t group, size_t nd, const size_t* info,
                             const T* src, T* dst) {
  using A = acc_t<T>;
  if constexpr (kKeyed<T>) {
    const A neutral = kMax ? lowest<T>() : highest<T>();
    const KeyExtremeOp<kMax> op{hkb::float_order_key(neutral)};
    const auto store = [dst](uint64_t o, int32_t r) {
      dst[o] = hkb::from_acc<T>(hkb::key_float(r));
    };
    if constexpr (sizeof(T) == 2 && hkb::tuning::kFastHalfKeys) {
      const auto packed_op = HalfKeyExtremeOp<T, kMax>::make(hkb::from_acc<T>(neutral));
      fast_reduce(src_numel, group, nd, info, src, op, packed_op, store);
    } else {
      fast_reduce(src_numel, group, nd, info, src, op, op, store);
    }
  } else {
    const ExtremeOp<A, kMax> op{kMax ? lowest<T>() : highest<T>()};
    fast_reduce(src_numel, group, nd, info, src, op, op,
                [dst](uint64_t o, A r) { dst[o] = hkb::from_acc<T>(r); });
  }
}

// Indices are 64-bit in the general paths (any group) and 32-bit in the packed-row path (groups
// below 2^32 elements).
template <typename T, bool kMax>
__device__ void fast_arg(size_t src_numel, size_t group, size_t nd, const size_t* info,
                         const T* src, uint32_t* dst) {
  using A = acc_t<T>;
  auto store = [dst](uint64_t o, auto r) { dst[o] = static_cast<uint32_t>(r.index); };
  if constexpr (sizeof(T) == 2 && kKeyed<T> && hkb::tuning::kFastHalfArgKeys) {
    fast_reduce(src_numel, group, nd, info, src, KeyArgOp<kMax, uint64_t>{},
                HalfKeyArgOp<T, kMax>{}, store, hkb::tuning::kFastShortRowBytesArg);
  } else if constexpr (kKeyed<T>) {
    fast_reduce(src_numel, group, nd, info, src, KeyArgOp<kMax, uint64_t>{},
                KeyArgOp<kMax, uint32_t>{}, store, hkb::tuning::kFastShortRowBytesArg);
  } else {
    const ArgOp<A, kMax, uint64_t> op{kMax ? lowest<T>() : highest<T>()};
    const ArgOp<A, kMax, uint32_t> packed_op{op.neutral};
    fast_reduce(src_numel, group, nd, info, src, op, packed_op, store,
                hkb::tuning::kFastShortRowBytesArg);
  }
}

}  // namespace
