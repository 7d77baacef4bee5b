// A bounds-checked MessagePack decoder for the AMDGPU code object metadata note
// (NT_AMDGPU_METADATA, code object v3 and later:
// https://llvm.org/docs/AMDGPUUsage.html#code-object-v3-metadata). It never reads past the buffer
// and bounds nesting depth, so a corrupt note yields an error message instead of a crash or
// unbounded recursion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hkb_tool::msgpack {

struct Value {
  enum class Type { kNil, kBool, kInt, kUint, kFloat, kString, kBinary, kArray, kMap, kExt };
  Type type = Type::kNil;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  std::string str;  // kString and kBinary bytes
  std::vector<Value> array;
  std::vector<std::pair<Value, Value>> map;

  bool is_map() const { return type == Type::kMap; }
  bool is_array() const { return type == Type::kArray; }
  bool is_string() const { return type == Type::kString; }
  // The value of string key `key` in a map, or nullptr.
  const Value* find(std::string_view key) const;
  // Non-negative integer value (kUint, or kInt >= 0); false otherwise.
  bool as_uint(uint64_t* out) const;
};

// Maximum nesting of arrays and maps accepted; AMDGPU metadata nests four levels.
constexpr int kMaxDepth = 64;

// Decodes exactly one value from `data`. On failure returns false and sets `error` to a message
// naming the byte offset. Trailing bytes after the value are reported as an error too.
bool decode(const uint8_t* data, size_t size, Value* out, std::string* error);

}  // namespace hkb_tool::msgpack
