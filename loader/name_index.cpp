#include "name_index.hpp"

#include <cstring>
#include <stdexcept>

namespace hkb::detail {

namespace {

uint64_t load64(const char* p) noexcept {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
uint64_t load32(const char* p) noexcept {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// Equal bytes, compared as the hash reads them: whole words, the last one overlapping.
bool same(const char* a, const char* b, size_t n) noexcept {
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

}  // namespace

// Words of the name multiplied in, the last one overlapping the one before (no byte loop), and
// the length: every byte counts once or twice, which only has to spread the names, not be unique.
uint64_t NameIndex::hash(const char* s, size_t n) noexcept {
  constexpr uint64_t kMul = 0xFF51AFD7ED558CCDull;
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) h = (h ^ load64(s + i)) * kMul;
    h = (h ^ load64(s + n - 8)) * kMul;
  } else if (n >= 4) {
    h = (h ^ (load32(s) | load32(s + n - 4) << 32)) * kMul;
  } else if (n > 0) {
    const uint64_t bytes = static_cast<unsigned char>(s[0]) |
                           uint64_t{static_cast<unsigned char>(s[n / 2])} << 8 |
                           uint64_t{static_cast<unsigned char>(s[n - 1])} << 16;
    h = (h ^ bytes) * kMul;
  }
  // Multiply-xorshift finaliser: the high half (the tag) and the low bits (the slot) both depend
  // on every input bit.
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  return h ^ (h >> 32);
}

NameIndex::NameIndex(const std::vector<KernelInfo>& kernels) {
  size_t size = 16;
  while (size < kernels.size() * 4) size *= 2;  // at most a quarter full: hits probe ~1.2 slots
  slots_.resize(size);
  mask_ = size - 1;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string& name = kernels[i].name;
    if (name.empty() || name.size() > UINT32_MAX || names_.size() > UINT32_MAX - name.size()) {
      throw std::invalid_argument("kernel names must be non-empty and fit in 4 GiB");
    }
    const uint64_t h = hash(name.data(), name.size());
    size_t probe = 1;
    size_t at = h & mask_;
    while (slots_[at].length != 0) {
      const Slot& s = slots_[at];
      if (s.length == name.size() &&
          std::memcmp(names_.data() + s.offset, name.data(), s.length) == 0)
        throw std::invalid_argument("kernel '" + name + "' listed twice");
      at = (at + 1) & mask_;
      ++probe;
    }
    slots_[at] = Slot{static_cast<uint32_t>(h >> 32), static_cast<uint32_t>(name.size()),
                      static_cast<uint32_t>(names_.size()), static_cast<uint32_t>(i)};
    names_ += name;
    if (probe > longest_probe_) longest_probe_ = probe;
  }
}

int64_t NameIndex::find(std::string_view name) const noexcept {
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

int64_t NameIndex::find(const char* name) const noexcept {
  return name == nullptr ? -1 : find(std::string_view(name));
}

}  // namespace hkb::detail
