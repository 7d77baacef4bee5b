// Kernel name -> manifest index through one open-addressing hash table: the lookup behind a cached
// hkb_function_get. No lock, no allocation, no std::string built from the name: the name is
// hashed in 8-byte words and compared once against the candidate its hash points to.
#pragma once

#include "manifest.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hkb::detail {

class NameIndex {
 public:
  NameIndex() = default;
  // Indexes kernels[i].name as i. Names must be distinct and non-empty (parse_manifest ensures it).
  explicit NameIndex(const std::vector<KernelInfo>& kernels);

  // Index of the kernel called `name` (NUL-terminated), or -1; -1 for null too.
  int64_t find(const char* name) const noexcept;
  int64_t find(std::string_view name) const noexcept;

  // Slots probed by the most expensive hit (for the unit tests: the table stays sparse).
  size_t longest_probe() const noexcept { return longest_probe_; }

 private:
  struct Slot {
    uint32_t tag = 0;     // the hash's high half
    uint32_t length = 0;  // 0: empty slot
    uint32_t offset = 0;  // of the name in names_
    uint32_t index = 0;   // into the manifest's kernels
  };
  static uint64_t hash(const char* s, size_t n) noexcept;

  std::vector<Slot> slots_;  // a power of two, at most a quarter full
  std::string names_;        // every name, back to back
  size_t mask_ = 0;
  size_t longest_probe_ = 0;
};

}  // namespace hkb::detail
