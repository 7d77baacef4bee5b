// CPU reference and checks of the SORT family, from the contract at the top of kernels/sort.hip:
// keys compare with every NaN greater than +inf and equal to other NaNs, -0.0 equal to +0.0; the
// kernels' order is the stable argsort (ties by column index) in both directions.
#pragma once

#include "dtypes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace ref {

// -1, 0, 1 for a < b, a == b, a > b in the sort's key order.
template <typename T>
int key_compare(T a, T b) {
  const double x = to_double(a), y = to_double(b);
  if constexpr (is_float_v<T>) {
    const bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) return nx == ny ? 0 : (nx ? 1 : -1);
  }
  if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
    // int64 keys beyond 2^53 would collide in double.
    return a < b ? -1 : (b < a ? 1 : 0);
  }
  return x < y ? -1 : (y < x ? 1 : 0);
}

// The stable argsort of one row.
template <typename T>
std::vector<uint32_t> stable_argsort(const T* row, size_t ncols, bool ascending) {
  std::vector<uint32_t> idx(ncols);
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    const int c = key_compare(row[a], row[b]);
    return ascending ? c < 0 : c > 0;
  });
  return idx;
}

// Empty when `got` is a permutation of 0..ncols-1 that orders the row's keys; else what is wrong.
// Accepts any order among equal keys.
template <typename T>
std::string check_argsort(const T* row, const uint32_t* got, size_t ncols, bool ascending) {
  std::vector<bool> seen(ncols, false);
  for (size_t i = 0; i < ncols; ++i) {
    if (got[i] >= ncols) return "entry " + std::to_string(i) + " = " + std::to_string(got[i]);
    if (seen[got[i]]) return "index " + std::to_string(got[i]) + " appears twice";
    seen[got[i]] = true;
  }
  for (size_t i = 1; i < ncols; ++i) {
    const int c = key_compare(row[got[i - 1]], row[got[i]]);
    if (ascending ? c > 0 : c < 0) {
      return "keys out of order at " + std::to_string(i) + ": " +
             std::to_string(to_double(row[got[i - 1]])) + " then " +
             std::to_string(to_double(row[got[i]]));
    }
  }
  return {};
}

}  // namespace ref
