// Fuzzes every reader of a module file: clang offload bundles, AMDGPU ELF notes with their
// msgpack metadata, CUDA fatbins and cubins, the loader's image selection for a device, and the
// JSON the tool prints from what was read (names may be any bytes).
#include "code_object.hpp"
#include "code_object_info.hpp"
#include "inventory.hpp"
#include "tool_util.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hkb_tool::InfoResult info;
  if (hkb_tool::read_module_file(data, size, "fuzz", &info.images)) {
    (void)hkb_tool::json_text(hkb_tool::info_json(info));
    (void)hkb_tool::info_text(info);
  }
  if (hkb::detail::has_bundle_magic(data, size)) {
    std::vector<hkb::detail::BundleEntry> entries;
    if (hkb::detail::parse_offload_bundle(data, size, "fuzz", &entries)) {
      for (const auto& e : entries) {
        if (e.offset > size || e.size > size - e.offset) __builtin_trap();  // must be checked
      }
    }
  }
  hkb::detail::SelectedImage selected;
  if (hkb::detail::select_amd_image(data, size, "gfx90a:sramecc+:xnack-", "fuzz", &selected)) {
    if (selected.data < data || selected.data + selected.size > data + size) __builtin_trap();
  }
  (void)hkb::detail::check_nvidia_image(data, size, "fuzz");
  return 0;
}
