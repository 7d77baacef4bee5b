// The kernel inventory: every kernel hkb exports, its module and its parameter list. Parsed from
// the JSON the build embeds (manifests/*.json combined); the single source of the loader's name
// table and of the inventory checks.
#pragma once

#include "status.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hkb::detail {

enum class ParamKind : uint8_t {
  kPointer,
  kUsize,
  kU8,
  kU16,
  kU32,
  kU64,
  kI16,
  kI32,
  kI64,
  kF16,
  kBf16,
  kF8E4M3,
  kF32,
  kF64,
  kBool
};

struct Param {
  std::string name;
  std::string type;  // as written in the manifest, e.g. "const f32*", "usize"
  ParamKind kind;
  uint32_t size;   // bytes of the host copy passed in kernelParams
  uint32_t align;  // alignment of the argument in the kernarg segment
};

// How hkb_launch_config_tuned sizes a launch of n elements (the manifest's "launch" field, per
// module with per-kernel overrides; manifests/README.md).
enum class LaunchRule : uint8_t {
  kNone,         // no element-count launch: the caller computes the geometry as candle does
  kForNumElems,  // candle's for_num_elems(n): hkb has no better launch for this kernel
  kResident,     // grid-stride kernel: the blocks the device holds at once, never more than n needs
};

struct KernelInfo {
  std::string name;
  uint32_t module = 0;  // index into Manifest::modules
  std::vector<Param> params;
  LaunchRule launch = LaunchRule::kNone;
  // Bytes of the widest element a data pointer points to (not the usize layout arrays), 0 when no
  // pointer has a typed element: the tuned launch sizes its grid in 16-byte packs of it.
  uint32_t element_bytes = 0;
};

// The rule a manifest's "launch" value names; false for an unknown value.
bool parse_launch_rule(std::string_view value, LaunchRule* rule);

struct Manifest {
  std::vector<std::string> modules;  // sorted
  std::vector<KernelInfo> kernels;   // sorted by name

  // Index of the kernel called `name`, or -1. No allocation.
  int64_t find(std::string_view name) const noexcept;
  // Up to `n` kernel names closest to `name` (edit distance, then prefix), for error messages.
  std::vector<std::string> nearest(std::string_view name, size_t n = 5) const;
  int64_t module_index(std::string_view module) const noexcept;
};

// Parses one parameter type ("const bf16*", "usize", "const void*", ...). False if unknown;
// "void" is known only as a pointee.
bool parse_param_type(std::string_view type, ParamKind* kind, uint32_t* size, uint32_t* align);

// Parses a combined manifest {"format": 1, "modules": [{"module": ..., "kernels": [...]}, ...]}
// or a single module manifest {"module": ..., "kernels": [...]}. `origin` names the source in
// messages. Rejects malformed JSON, unknown types, duplicate symbols and empty inventories.
Status parse_manifest(std::string_view json, std::string_view origin, Manifest* out);

}  // namespace hkb::detail
