// CPU references of the INDEXING family, written from the contract at the top of
// kernels/indexing.hip: shapes split as (left, dim, right), the index dtype's maximum is a
// sentinel, ids outside [0, dim) behave like the sentinel, and the writing ops walk the ids in
// increasing order with the value dtype's rounding after every addition.
#pragma once

#include "dtypes.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

namespace ref {

template <typename I>
constexpr I index_sentinel() {
  return std::numeric_limits<I>::max();
}

// The addressed position, or nothing for the sentinel and ids outside [0, dim).
template <typename I>
std::optional<size_t> resolve_index(I id, size_t dim) {
  if (id == index_sentinel<I>()) return std::nullopt;
  if constexpr (std::is_signed_v<I>) {
    if (id < 0) return std::nullopt;
  }
  const uint64_t v = static_cast<uint64_t>(id);
  if (v >= dim) return std::nullopt;
  return static_cast<size_t>(v);
}

// a + b in T with one rounding (floats) or wrapping (integers). The sum of two values of any
// float dtype is exact in double or rounds in a way that a second rounding to T cannot change
// (double has more than 2p + 2 bits for every p here), so this is the correctly rounded sum.
template <typename T>
T add(T a, T b) {
  if constexpr (is_float_v<T>) {
    return from_double<T>(to_double(a) + to_double(b));
  } else {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
}

template <typename T>
T zero_value() {
  T v;
  std::memset(&v, 0, sizeof(T));
  return v;
}

// out[l, i, r] = src[l, ids[i], r]; `ids` already read through its layout (ids_dim entries).
template <typename I, typename T>
std::vector<T> index_select(const std::vector<I>& ids, const std::vector<T>& src, size_t left,
                            size_t src_dim, size_t right) {
  const size_t n_ids = ids.size();
  std::vector<T> out(left * n_ids * right);
  for (size_t l = 0; l < left; ++l) {
    for (size_t i = 0; i < n_ids; ++i) {
      const auto pos = resolve_index(ids[i], src_dim);
      for (size_t r = 0; r < right; ++r) {
        out[(l * n_ids + i) * right + r] =
            pos ? src[(l * src_dim + *pos) * right + r] : zero_value<T>();
      }
    }
  }
  return out;
}

// out[l, i, r] = src[l, ids[l, i, r], r]; ids and out are (left, ids_dim, right).
template <typename I, typename T>
std::vector<T> gather(const std::vector<I>& ids, const std::vector<T>& src, size_t left,
                      size_t src_dim, size_t ids_dim, size_t right) {
  std::vector<T> out(left * ids_dim * right);
  for (size_t l = 0; l < left; ++l) {
    for (size_t i = 0; i < ids_dim; ++i) {
      for (size_t r = 0; r < right; ++r) {
        const size_t k = (l * ids_dim + i) * right + r;
        const auto pos = resolve_index(ids[k], src_dim);
        out[k] = pos ? src[(l * src_dim + *pos) * right + r] : zero_value<T>();
      }
    }
  }
  return out;
}

// dst[l, ids[i], r] += src[l, i, r] for i = 0, 1, ... in order; src is (left, ids.size(), right).
template <typename I, typename T>
void index_add(const std::vector<I>& ids, const std::vector<T>& src, std::vector<T>& dst,
               size_t left, size_t dst_dim, size_t right) {
  const size_t n_ids = ids.size();
  for (size_t l = 0; l < left; ++l) {
    for (size_t r = 0; r < right; ++r) {
      for (size_t i = 0; i < n_ids; ++i) {
        const auto pos = resolve_index(ids[i], dst_dim);
        if (!pos) continue;
        T& d = dst[(l * dst_dim + *pos) * right + r];
        d = add(d, src[(l * n_ids + i) * right + r]);
      }
    }
  }
}

// dst[l, ids[l, i, r], r] = (or +=) src[l, i, r] for i = 0, 1, ... in order; ids and src are
// (left, src_dim, right).
template <bool Accumulate, typename I, typename T>
void scatter(const std::vector<I>& ids, const std::vector<T>& src, std::vector<T>& dst, size_t left,
             size_t src_dim, size_t dst_dim, size_t right) {
  for (size_t l = 0; l < left; ++l) {
    for (size_t r = 0; r < right; ++r) {
      for (size_t i = 0; i < src_dim; ++i) {
        const size_t k = (l * src_dim + i) * right + r;
        const auto pos = resolve_index(ids[k], dst_dim);
        if (!pos) continue;
        T& d = dst[(l * dst_dim + *pos) * right + r];
        d = Accumulate ? add(d, src[k]) : src[k];
      }
    }
  }
}

}  // namespace ref
