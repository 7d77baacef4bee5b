// Byte patches of a real code object's AMDGPU metadata (msgpack), shared by the inventory and CLI
// tests: find a key's encoding, then overwrite the value byte after it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace test_util {

using Bytes = std::vector<uint8_t>;

// Offsets of every occurrence of `needle` in `hay`.
inline std::vector<size_t> find_all(const Bytes& hay, const Bytes& needle) {
  std::vector<size_t> at;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    if (std::memcmp(hay.data() + i, needle.data(), needle.size()) == 0) at.push_back(i);
  }
  return at;
}

inline Bytes msgpack_key(const std::string& key) {  // fixstr: keys shorter than 32 bytes
  Bytes b{static_cast<uint8_t>(0xa0 | key.size())};
  b.insert(b.end(), key.begin(), key.end());
  return b;
}

// Every `key: from` (positive fixints, 0..127) becomes `key: to`; returns how many.
inline size_t patch_fixint(Bytes* b, const std::string& key, uint8_t from, uint8_t to) {
  Bytes pattern = msgpack_key(key);
  pattern.push_back(from);
  const auto at = find_all(*b, pattern);
  for (size_t p : at) (*b)[p + pattern.size() - 1] = to;
  return at.size();
}

}  // namespace test_util
