// Kernel name -> manifest index through one open-addressing hash table: the lookup behind a cached
// hkb_function_get. No lock, no allocation, no std::string built from the name: the name is
// hashed in 8-byte words and compared once against the candidate its hash points to.
#pragma once

#include "manifest.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace hkb::detail {

class NameIndex {
 public:
  NameIndex() = default;
  // Indexes kernels[i].name as i. Names must be distinct and non-empty (parse_manifest ensures it).
  explicit NameIndex(const std::vector<KernelInfo>& kernels);

  // Index of the kernel called `name` (NUL-terminated), or -1; -1 for null too. Inline: it is
  // the whole of a cached hkb_function_get.
  int64_t find(const char* name) const noexcept {
    return name == nullptr ? -1 : find(std::string_view(name));
  }
  int64_t find(std::string_view name) const noexcept {
    if (slots_.empty() || name.empty()) return -1;
    const uint64_t h = hash(name.data(), name.size());
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (size_t at = h & mask_;; at = (at + 1) & mask_) {
      const Slot& s = slots_[at];
      if (s.length == 0) return -1;
      if (s.tag == tag && s.length == name.size() &&
          same(names_.data() + s.offset, name.data(), name.size())) {
        return s.index;
      }
    }
  }

  // Slots probed by the most expensive hit (for the unit tests: the table stays sparse).
  size_t longest_probe() const noexcept { return longest_probe_; }

 private:
  struct Slot {
    uint32_t tag = 0;     // the hash's high half
    uint32_t length = 0;  // 0: empty slot
    uint32_t offset = 0;  // of the name in names_
    uint32_t index = 0;   // into the manifest's kernels
  };
  static uint64_t load64(const char* p) noexcept {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  static uint64_t load32(const char* p) noexcept {
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
  }
  // Words of the name multiplied in, the last one overlapping the one before (no byte loop), and
  // the length: every byte counts once or twice, which only has to spread the names.
  static uint64_t hash(const char* s, size_t n) noexcept {
    constexpr uint64_t kMul = 0xFF51AFD7ED558CCDull;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    if (n >= 8) {
      for (size_t i = 0; i + 8 < n; i += 8) h = (h ^ load64(s + i)) * kMul;
      h = (h ^ load64(s + n - 8)) * kMul;
    } else if (n >= 4) {
      h = (h ^ (load32(s) | load32(s + n - 4) << 32)) * kMul;
    } else if (n > 0) {
      h = (h ^
           (static_cast<unsigned char>(s[0]) | uint64_t{static_cast<unsigned char>(s[n / 2])} << 8 |
            uint64_t{static_cast<unsigned char>(s[n - 1])} << 16)) *
          kMul;
    }
    // Multiply-xorshift finaliser: the tag (high half) and the slot (low bits) see every bit.
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    return h ^ (h >> 32);
  }
  // Equal bytes, compared as the hash reads them: whole words, the last one overlapping.
  static bool same(const char* a, const char* b, size_t n) noexcept {
    if (n >= 8) {
      for (size_t i = 0; i + 8 < n; i += 8) {
        if (load64(a + i) != load64(b + i)) return false;
      }
      return load64(a + n - 8) == load64(b + n - 8);
    }
    if (n >= 4) return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

  std::vector<Slot> slots_;  // a power of two, at most a quarter full
  std::string names_;        // every name, back to back
  size_t mask_ = 0;
  size_t longest_probe_ = 0;
};

}  // namespace hkb::detail
