#include "name_index.hpp"

#include <cstring>
#include <stdexcept>

namespace hkb::detail {

namespace {

uint64_t load_word(const char* p) noexcept {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// Multiply-xorshift finaliser: spreads every input bit over the high half the tag comes from and
// the low bits the slot comes from.
uint64_t mix(uint64_t h) noexcept {
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return h;
}

}  // namespace

uint64_t NameIndex::hash(const char* s, size_t n) noexcept {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) h = (h ^ load_word(s + i)) * 0xFF51AFD7ED558CCDull;
  uint64_t tail = 0;
  for (size_t k = 0; i + k < n; ++k)
    tail |= uint64_t{static_cast<unsigned char>(s[i + k])} << (8 * k);
  return mix((h ^ tail) * 0xC4CEB9FE1A85EC53ull);
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
        std::memcmp(names_.data() + s.offset, name.data(), name.size()) == 0) {
      return s.index;
    }
  }
}

int64_t NameIndex::find(const char* name) const noexcept {
  return name == nullptr ? -1 : find(std::string_view(name));
}

}  // namespace hkb::detail
