// Code object containers. AMD: clang offload bundles ("__CLANG_OFFLOAD_BUNDLE__", one entry per
// target, e.g. "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-") or a bare AMDGPU ELF. NVIDIA: a fatbin
// or a cubin (ELF), handed to the driver as is. Parsing never reads outside the given bytes.
#pragma once

#include "status.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hkb::detail {

// The u32 device global every hkb module defines (kernels/common/platform.h): the loader writes
// the device's multiprocessor count into it after loading the module, and `hkb check` requires it.
inline constexpr const char* kMultiprocessorsSymbol = "hkb_multiprocessors";
// The largest count the loader writes: the kernels multiply it by their per-multiprocessor
// factors in 32 bits (at most 512 threads per multiprocessor).
inline constexpr uint32_t kMaxMultiprocessors = 1u << 16;

struct BundleEntry {
  std::string id;      // the bundle's entry ID as written
  std::string kind;    // "hipv4", "hip", "host", ...
  std::string triple;  // "amdgcn-amd-amdhsa-", "x86_64-unknown-linux-gnu"
  std::string target;  // target ID, e.g. "gfx90a:xnack-"; empty for the host entry
  uint64_t offset = 0;
  uint64_t size = 0;
  bool is_amdgpu() const { return triple.rfind("amdgcn-amd-amdhsa", 0) == 0; }
};

bool has_bundle_magic(const uint8_t* data, size_t size);
bool is_elf(const uint8_t* data, size_t size);
bool is_cuda_fatbin(const uint8_t* data, size_t size);

// Parses the entry table of an offload bundle; validates every entry lies inside the data.
Status parse_offload_bundle(const uint8_t* data, size_t size, std::string_view origin,
                            std::vector<BundleEntry>* entries);

// Splits "gfx90a:sramecc+:xnack-" into the processor and its features.
std::string target_processor(std::string_view target_id);

// True when code built for `code_target` runs on a device whose full target ID is
// `device_target`: same processor, and every feature the code names has the device's setting
// (a feature the code leaves unnamed means "any").
bool target_compatible(std::string_view code_target, std::string_view device_target);

struct SelectedImage {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string target;  // the entry's target ID ("" for a bare ELF or an NVIDIA image)
};

// Picks the AMDGPU code object for `device_target` out of `data` (bundle or bare ELF). Errors
// name the device's target ID and every target the bundle holds.
Status select_amd_image(const uint8_t* data, size_t size, std::string_view device_target,
                        std::string_view origin, SelectedImage* out);

// Checks that `data` is a fatbin or cubin before the driver sees it.
Status check_nvidia_image(const uint8_t* data, size_t size, std::string_view origin);

// The AMD targets held by a bundle (empty for a bare ELF), for `hkb doctor` and messages.
std::vector<std::string> bundle_targets(const std::vector<BundleEntry>& entries);

}  // namespace hkb::detail
