// Fuzzes the manifest parser (JSON with modules, kernels and parameter types) and the queries the
// loader makes on a parsed manifest.
#include "library.hpp"
#include "manifest.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  hkb::detail::Manifest m;
  if (!hkb::detail::parse_manifest(text, "fuzz", &m)) return 0;
  for (const auto& k : m.kernels) {
    if (k.module >= m.modules.size()) __builtin_trap();
    if (m.find(k.name) < 0) __builtin_trap();  // every listed kernel must be found by name
    (void)hkb::detail::signature_string(k);
  }
  (void)m.nearest("affine_f32");
  return 0;
}
