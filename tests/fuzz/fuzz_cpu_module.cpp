// Fuzzes the readers of a CPU module (the CPU platform's code objects): the ar archive of wave
// widths and, for each member, the ELF reader of static shared memory (loader/cpu_shared.hpp).
#include "cpu_shared.hpp"
#include "platforms.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

void read_elf(const uint8_t* data, size_t size) {
  hkb::detail::CpuSharedUsage usage;
  if (!hkb::detail::CpuSharedUsage::read(data, size, " sort_slots x", &usage).is_ok()) return;
  uint64_t bytes = 0;
  for (const char* name : {"hkb_cpu_entry_affine_f32", "hkb_cpu_entry_fill_u8", "main", ""})
    (void)usage.static_bytes(name, &bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  read_elf(data, size);
  std::vector<hkb::detail::CpuModuleMember> members;
  if (!hkb::detail::cpu_module_members(data, size, "fuzz", &members).is_ok()) return 0;
  for (const auto& m : members) {
    if (m.data < data || m.data + m.size > data + size) __builtin_trap();  // must be checked
    read_elf(m.data, m.size);
  }
  return 0;
}
