// Fuzzes the parser of candle's ABI table (manifests/candle-abi.tsv): header columns, C parameter
// declarations and their sizes.
#include "inventory.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<hkb_tool::CandleSymbol> symbols;
  if (!hkb_tool::parse_candle_abi(text, "fuzz", &symbols)) return 0;
  for (const auto& s : symbols) {
    if (s.name.empty() || s.ctypes.size() != s.sizes.size()) __builtin_trap();
    for (uint32_t b : s.sizes) {
      if (b == 0) __builtin_trap();
    }
  }
  return 0;
}
