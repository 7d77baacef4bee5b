// Reduction operators: per-thread state (init/add/finish) and the cross-thread combine.
#pragma once

#include "block.h"

namespace {

// Floating sums: Neumaier compensation per thread.
template <typename A>
struct SumFloatOp {
  using V = A;
  // The packed-row path first adds the values of a 16-byte pack pairwise (log2(pack) levels).
  static constexpr bool kPresum = hkb::tuning::kFastPresum;
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

// min / max / argmin / argmax of floats (f32, and f16 / bf16 widened exactly) on order keys
// (dtypes.h): one integer compare a value where the float compare needs NaN and signed-zero tests.
// Every NaN takes kNan, past every value on the winning side, so NaN wins and NaNs tie.
template <bool kMax>
struct FloatKey {
  static constexpr int32_t kNan = kMax ? 0x7FFFFFFF : static_cast<int32_t>(0x80000000u);
  HKB_DEVICE static int32_t of(float x) {
    return (hkb::float_bits(x) & 0x7FFFFFFFu) > 0x7F800000u ? kNan : hkb::float_order_key(x);
  }
  HKB_DEVICE static bool beats(int32_t a, int32_t b) { return kMax ? a > b : a < b; }
};

template <bool kMax>
struct KeyExtremeOp {
  using V = int32_t;
  using State = int32_t;
  static constexpr bool kPresum = false;
  int32_t neutral;  // the key of -inf for max, +inf for min
  HKB_DEVICE V identity() const { return neutral; }
  HKB_DEVICE State init() const { return neutral; }
  HKB_DEVICE void add(State& st, float x, uint64_t) const {
    st = combine(st, FloatKey<kMax>::of(x));
  }
  HKB_DEVICE V finish(State st) const { return st; }
  HKB_DEVICE V combine(V a, V b) const { return FloatKey<kMax>::beats(b, a) ? b : a; }
};

// min / max of 16-bit floats (f16, bf16) over whole packs (reduce_packed_rows): the two values of
// a 32-bit word as two 16-bit order keys, compared lane-wise (hkb::max_s16x2: one instruction for
// two values, where KeyExtremeOp widens each and tests it for NaN), beside the words' largest
// magnitudes, which tell at the end whether a NaN was seen (its magnitude exceeds every number's).
// finish() gives KeyExtremeOp's key, so both combine alike.
template <typename T, bool kMax>
struct HalfKeyExtremeOp {
  static_assert(sizeof(T) == 2, "16-bit floats");
  using V = int32_t;
  struct State {
    uint32_t keys, mags;
  };
  static constexpr bool kPresum = false;
  // The largest magnitude that is not a NaN: infinity's bits.
  static constexpr uint32_t kInf = std::is_same<T, hkb::bf16>::value ? 0x7F80u : 0x7C00u;
  uint32_t neutral;  // the neutral value's 16-bit key in both halves
  HKB_DEVICE static uint32_t keys_of(uint32_t w) {
    return w ^ (hkb::sign_fill16x2(w) & 0x7FFF7FFFu);  // half_order_key (dtypes.h) lane-wise
  }
  HKB_DEVICE static HalfKeyExtremeOp make(T neutral_value) {
    uint16_t b;
    __builtin_memcpy(&b, &neutral_value, 2);
    return {static_cast<uint16_t>(hkb::half_order_key(b)) * 0x00010001u};
  }
  HKB_DEVICE V identity() const { return finish(init()); }
  HKB_DEVICE State init() const { return {neutral, 0u}; }
  HKB_DEVICE void add_word(State& st, uint32_t w) const {
    const uint32_t k = keys_of(w);
    st.keys = kMax ? hkb::max_s16x2(st.keys, k) : hkb::min_s16x2(st.keys, k);
    st.mags = hkb::max_u16x2(st.mags, w & 0x7FFF7FFFu);
  }
  HKB_DEVICE V finish(State st) const {
    if ((st.mags & 0xFFFFu) > kInf || (st.mags >> 16) > kInf) return FloatKey<kMax>::kNan;
    const int32_t lo = static_cast<int16_t>(st.keys & 0xFFFFu);
    const int32_t hi = static_cast<int16_t>(st.keys >> 16);
    return key32(FloatKey<kMax>::beats(hi, lo) ? hi : lo);
  }
  // A 16-bit key as FloatKey's 32-bit key of the widened value (half_order_key is its own inverse).
  HKB_DEVICE static int32_t key32(int32_t key16) {
    const T t{static_cast<uint16_t>(hkb::half_order_key(static_cast<uint16_t>(key16)))};
    return hkb::float_order_key(hkb::widen(t));
  }
  HKB_DEVICE V combine(V a, V b) const { return FloatKey<kMax>::beats(b, a) ? b : a; }
};

// add() takes a thread's values of one group in increasing index (every traversal of fast.h does),
// so a strictly better key alone replaces the state and the first index among equals stays.
template <bool kMax, typename I>
struct KeyArgOp {
  using V = ArgPart<int32_t, I>;
  using State = V;
  static constexpr bool kPresum = false;
  HKB_DEVICE V identity() const {
    return {kMax ? static_cast<int32_t>(0x80000000u) : 0x7FFFFFFF, static_cast<I>(~I(0))};
  }
  HKB_DEVICE State init() const { return identity(); }
  HKB_DEVICE void add(State& st, float x, uint64_t j) const {
    const int32_t k = FloatKey<kMax>::of(x);
    if (FloatKey<kMax>::beats(k, st.value)) st = {k, static_cast<I>(j)};
  }
  HKB_DEVICE V finish(State st) const { return st; }
  HKB_DEVICE V combine(V a, V b) const {
    const bool b_wins =
        FloatKey<kMax>::beats(b.value, a.value) || (b.value == a.value && b.index < a.index);
    return b_wins ? b : a;
  }
};

// argmin / argmax of 16-bit floats over whole packs (reduce_packed_rows), in about half of
// KeyArgOp's instructions a value: each lane of a word (HalfKeyExtremeOp's 16-bit keys) becomes
// one 32-bit entry, key << 16 | the word's count within the thread's row (inverted for max), so
// one 32-bit max / min keeps the best key at its first word. A thread adds at most kMaxWords
// words to a row (fast_reduce leaves longer rows to the element-wise path). NaN has no key here: a
// NaN of the winning sign shows in the best key, one of the other sign in the lanes' largest raw
// bits (`others`), and the thread then reads its values of that row again through Exact
// (finish_row, fast.h), where NaN wins at its first index.
template <typename T, bool kMax>
struct HalfKeyArgOp {
  static_assert(sizeof(T) == 2, "16-bit floats");
  using Exact = KeyArgOp<kMax, uint32_t>;
  using V = typename Exact::V;
  static constexpr uint32_t kMaxWords = 0x10000u;
  // Before the first word lo = hi = kWorst, which no number's entry equals (only a NaN's can).
  struct State {
    int32_t lo, hi;   // the best entry of each lane
    uint32_t others;  // max: the lanes' largest bits unsigned (-NaN > -inf); min: signed (+NaN)
  };
  static constexpr int32_t kWorst = kMax ? INT32_MIN : INT32_MAX;
  static constexpr bool kPresum = false;
  static constexpr int32_t kInf = static_cast<int32_t>(HalfKeyExtremeOp<T, kMax>::kInf);
  HKB_DEVICE V identity() const { return Exact{}.identity(); }
  HKB_DEVICE State init() const { return {kWorst, kWorst, kMax ? 0u : 0x80008000u}; }
  HKB_DEVICE void add_word(State& st, uint32_t w, uint32_t count) const {
    const uint32_t k = HalfKeyExtremeOp<T, kMax>::keys_of(w);
    const uint32_t tag = kMax ? 0xFFFFu - count : count;
    const int32_t lo = static_cast<int32_t>((k << 16) + tag);
    const int32_t hi = static_cast<int32_t>((k & 0xFFFF0000u) | tag);
    st.lo = kMax ? (lo > st.lo ? lo : st.lo) : (lo < st.lo ? lo : st.lo);
    st.hi = kMax ? (hi > st.hi ? hi : st.hi) : (hi < st.hi ? hi : st.hi);
    st.others = kMax ? hkb::max_u16x2(st.others, w) : hkb::max_s16x2(st.others, w);
  }
  // False before the first word: kWorst's keys and others' start are no NaN.
  HKB_DEVICE static bool saw_nan(const State& st) {
    const auto nan_key = [](int32_t k) { return kMax ? k > kInf : k < -kInf - 1; };
    const auto nan_other = [](uint32_t b) {
      return kMax ? b > (0x8000u | static_cast<uint32_t>(kInf))
                  : static_cast<int16_t>(b) > static_cast<int16_t>(kInf);
    };
    return nan_key(st.lo >> 16) || nan_key(st.hi >> 16) || nan_other(st.others & 0xFFFFu) ||
           nan_other(st.others >> 16);
  }
  // Without NaN (saw_nan false): the better lane, the low one first among equals, as KeyArgOp's
  // 32-bit key of the widened value and the element index (word count n of the thread's row is
  // element col + n / W * col_step + 2 * (n % W), W words a pack).
  template <int W>
  HKB_DEVICE V finish(const State& st, uint32_t col, uint32_t col_step) const {
    if (st.lo == kWorst) return identity();  // no word (a NaN's entry took the exact op)
    const auto lane = [&](int32_t e, uint32_t odd) -> V {
      const uint32_t n = kMax ? 0xFFFFu - (e & 0xFFFF) : (e & 0xFFFF);
      return {HalfKeyExtremeOp<T, kMax>::key32(e >> 16),
              col + n / W * col_step + 2 * (n % W) + odd};
    };
    return combine(lane(st.lo, 0), lane(st.hi, 1));
  }
  HKB_DEVICE V combine(V a, V b) const { return Exact{}.combine(a, b); }
};

// exp for softmax: where the results are rounded to a reduced float (kFast), hkb::fast_exp's
// error stays far below their half ulp; f32 and f64 results take the accurate exp.
template <bool kFast, typename A>
HKB_DEVICE A softmax_exp(A x) {
  if constexpr (kFast && sizeof(A) == 4) {
    return hkb::fast_exp(x);
  } else {
    return exp_of(x);
  }
}

template <typename A, bool kFast = false>
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
  HKB_DEVICE static A rescaled(V p, A m) {
    return p.max == m ? p.sum : p.sum * softmax_exp<kFast>(p.max - m);
  }
  // Adds N values with one rescale: a NaN among them makes the part NaN, -inf values add
  // exp(-inf) = 0 (an all -inf run adds nothing, even to an all -inf prefix).
  template <int N>
  HKB_DEVICE static void add_run(V& st, const A (&x)[N]) {
    A m = x[0];
#pragma unroll
    for (int k = 1; k < N; ++k) m = x[k] > m || is_nan(x[k]) ? x[k] : m;  // NaN sticks
    if (is_nan(m)) {
      st = {m, m};
      return;
    }
    if (m == -infinity<A>()) return;
    if (m > st.max) {  // false for a NaN part, whose sum stays NaN below
      st.sum *= softmax_exp<kFast>(st.max - m);
      st.max = m;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) st.sum += softmax_exp<kFast>(x[k] - st.max);
  }
  HKB_DEVICE V combine(V a, V b) const {
    const A m = nan_max(a.max, b.max);
    return {m, rescaled(a, m) + rescaled(b, m)};
  }
};

}  // namespace
