// GGML block formats, CPU reference: the type table, IEEE binary16 conversion, little-endian field
// access, ggml's round-to-nearest, and the block-parallel driver shared by every format.
// Arithmetic follows ggml's float expressions term by term; build without FMA contraction
// (x86-64's default target has no FMA) so quantized bytes stay identical to ggml's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ref::ggml {

enum class QType { q4_0, q4_1, q5_0, q5_1, q8_0, q8_1, q2_K, q3_K, q4_K, q5_K, q6_K, q8_K };

struct QTypeInfo {
  const char* name;
  size_t block_values;
  size_t block_bytes;
};

inline constexpr QType kAllTypes[12] = {QType::q4_0, QType::q4_1, QType::q5_0, QType::q5_1,
                                        QType::q8_0, QType::q8_1, QType::q2_K, QType::q3_K,
                                        QType::q4_K, QType::q5_K, QType::q6_K, QType::q8_K};

inline constexpr size_t kQK = 32;    // values of a legacy block (q4_0 .. q8_1)
inline constexpr size_t kQKK = 256;  // values of a K-quant super-block

inline const QTypeInfo& info(QType t) {
  static const QTypeInfo table[12] = {{"q4_0", 32, 18},   {"q4_1", 32, 20},   {"q5_0", 32, 22},
                                      {"q5_1", 32, 24},   {"q8_0", 32, 34},   {"q8_1", 32, 36},
                                      {"q2_K", 256, 84},  {"q3_K", 256, 110}, {"q4_K", 256, 144},
                                      {"q5_K", 256, 176}, {"q6_K", 256, 210}, {"q8_K", 256, 292}};
  const auto i = static_cast<size_t>(t);
  if (i >= 12) throw std::invalid_argument("ref::ggml: unknown QType " + std::to_string(i));
  return table[i];
}

// ---- IEEE binary16, round to nearest even -------------------------------------------------

inline uint16_t float_to_half(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t mag = u & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) {  // NaN: keep it quiet and keep the top payload bits
    return static_cast<uint16_t>(sign | 0x7E00u | ((mag >> 13) & 0x3FFu));
  }
  // 65520 is halfway between 65504 and 2^16; the tie goes to the even code, which is inf.
  if (mag >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (mag >= 0x38800000u) {  // normal half: rebias the exponent, round 13 dropped bits
    const uint32_t rebased = mag - (112u << 23);
    uint32_t h = rebased >> 13;
    const uint32_t rest = rebased & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may raise the exponent
    return static_cast<uint16_t>(sign | h);
  }
  // Subnormal half (units of 2^-24); at most 2^-25 rounds to zero (the tie goes to even 0).
  if (mag <= 0x33000000u) return sign;
  const uint32_t exp = mag >> 23;  // 102 .. 112 here
  const uint32_t sig = (mag & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126u - exp;  // 14 .. 24
  uint32_t h = sig >> shift;
  const uint32_t rest = sig & ((1u << shift) - 1u);
  const uint32_t half_unit = 1u << (shift - 1u);
  if (rest > half_unit || (rest == half_unit && (h & 1u))) ++h;  // may become the smallest normal
  return static_cast<uint16_t>(sign | h);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  uint32_t u;
  if (exp == 0x1Fu) {
    u = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) {
    u = sign | ((exp + 112u) << 23) | (man << 13);
  } else {  // zero or subnormal: man * 2^-24, exact in float
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---- Little-endian fields -------------------------------------------------------------------

inline uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xFF);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline float load_half(const uint8_t* p) {
  return half_to_float(load_u16(p));
}
inline void store_half(uint8_t* p, float v) {
  store_u16(p, float_to_half(v));
}
inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline float load_f32(const uint8_t* p) {
  const uint32_t u = load_u32(p);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline void store_f32(uint8_t* p, float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  store_u32(p, u);
}

// ---- Rounding -------------------------------------------------------------------------------

// ggml's nearest_int: round half to even, by adding 1.5 * 2^23 so the float adder drops the
// fraction. ggml asserts |v| <= 4194303; larger values (only from degenerate fits) saturate here.
inline int nearest_int(float v) {
  if (!(std::fabs(v) <= 4194303.0f)) return std::isnan(v) ? 0 : (v > 0 ? 4194303 : -4194303);
  const float shifted = v + 12582912.0f;
  int32_t bits;
  std::memcpy(&bits, &shifted, 4);
  return (bits & 0x007FFFFF) - 0x00400000;
}

inline int clamp_int(int v, int lo, int hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// ---- Input checks and the block driver ------------------------------------------------------

inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("ref::ggml: " + what);
}

inline void require_finite(const float* x, size_t n, const char* who) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) {
      throw std::invalid_argument(std::string("ref::ggml: ") + who + ": value " +
                                  std::to_string(i) + " is not finite");
    }
  }
}

// Runs body(first, last) over [0, count) on up to hardware_concurrency threads. Blocks are
// independent, so the result is the same for any split; small jobs stay on the caller's thread.
template <typename Body>
void for_blocks(size_t count, size_t min_per_thread, Body body) {
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, std::max<size_t>(1, count / std::max<size_t>(1, min_per_thread)));
  if (threads <= 1) {
    body(size_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  const size_t step = (count + threads - 1) / threads;
  for (size_t first = step; first < count; first += step) {
    pool.emplace_back(body, first, std::min(count, first + step));
  }
  body(size_t{0}, std::min(count, step));
  for (auto& t : pool) t.join();
}

}  // namespace ref::ggml
