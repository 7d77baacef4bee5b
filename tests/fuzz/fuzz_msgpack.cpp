// Fuzzes the msgpack decoder behind NT_AMDGPU_METADATA directly (deep nesting, huge lengths,
// truncation), where the code object target reaches it only through a valid ELF note.
#include "msgpack.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hkb_tool::msgpack::Value v;
  std::string error;
  if (hkb_tool::msgpack::decode(data, size, &v, &error)) {
    uint64_t u = 0;
    if (const auto* k = v.find("amdhsa.kernels")) (void)k->as_uint(&u);
  } else if (error.empty()) {
    __builtin_trap();  // a failure must say why
  }
  return 0;
}
