#include "name_index.hpp"

#include <cstring>
#include <stdexcept>

namespace hkb::detail {

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
      if (s.length == name.size() && same(names_.data() + s.offset, name.data(), s.length))
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

}  // namespace hkb::detail
