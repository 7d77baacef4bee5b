// What a compiled code object says about its kernels: for AMDGPU ELF objects the
// NT_AMDGPU_METADATA note (kernel names, explicit argument layout, register and memory use); for
// CUDA cubins the per-kernel `.nv.info.<kernel>` attribute sections (EIATTR_KPARAM_INFO: ordinal,
// offset and size of each parameter). Every reader is bounds-checked and reports a corrupt,
// truncated or foreign file as a Status naming it.
#pragma once

#include "code_object.hpp"
#include "status.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hkb_tool {

using hkb::detail::Status;

struct KernelArg {
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string value_kind;  // AMD ".value_kind"; "param" for CUDA
  std::string name;        // AMD ".name" where the compiler wrote one
};

// A field the code object did not state is -1.
struct KernelMeta {
  std::string name;
  std::vector<KernelArg> args;  // explicit arguments only (AMD hidden_* arguments are dropped)
  int64_t kernarg_segment_size = -1;
  int64_t vgpr_count = -1;
  int64_t sgpr_count = -1;
  int64_t agpr_count = -1;
  int64_t vgpr_spill_count = -1;
  int64_t sgpr_spill_count = -1;
  int64_t group_segment_fixed_size = -1;    // LDS bytes
  int64_t private_segment_fixed_size = -1;  // scratch bytes per work-item
  int64_t wavefront_size = -1;
  int64_t max_flat_workgroup_size = -1;
};

enum class ImageKind { kAmdgpu, kCubin };

struct TargetImage {
  ImageKind kind = ImageKind::kAmdgpu;
  std::string target;                // "gfx90a:xnack-" (bundle entry ID), "sm_90" for a cubin
  std::vector<KernelMeta> kernels;   // sorted by name
  std::vector<std::string> globals;  // defined data symbols (device globals), sorted
  std::string note;  // set when the image's kernels could not be read but that is not an error
};

// Kernels of one AMDGPU ELF code object from its NT_AMDGPU_METADATA note.
Status read_amdgpu_elf(const uint8_t* data, size_t size, std::string_view origin,
                       std::vector<KernelMeta>* kernels, std::string* isa_target = nullptr);

// Kernels of one CUDA cubin from its `.nv.info.<kernel>` sections.
Status read_cubin(const uint8_t* data, size_t size, std::string_view origin,
                  std::vector<KernelMeta>* kernels, std::string* sm_target = nullptr);

// Names of the defined data objects of one ELF code object (AMDGPU or cubin), sorted.
Status read_elf_globals(const uint8_t* data, size_t size, std::string_view origin,
                        std::vector<std::string>* globals);

// Every target image of a module file: a clang offload bundle (each AMDGPU entry), a bare
// AMDGPU ELF, a CUDA fatbin (each cubin entry) or a bare cubin. Fails on anything else, on a
// bundle without an AMDGPU entry and on any image that cannot be read. A compressed fatbin
// entry is not an error: it comes back with an empty kernel list and `note` saying why.
Status read_module_file(const uint8_t* data, size_t size, std::string_view origin,
                        std::vector<TargetImage>* images);

Status read_file_bytes(const std::string& path, std::vector<uint8_t>* out);

}  // namespace hkb_tool
