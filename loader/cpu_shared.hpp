// Static `__shared__` bytes of the kernels of a CPU module. On the CPU platform a `__shared__`
// variable is a thread-local one (platform_cpu.h), so a kernel's static shared memory is the
// thread-locals its entry reaches through calls: read from the module's symbol table and the
// relocations it keeps (linked with --emit-relocs, cmake/HkbKernels.cmake). AMD refuses a launch
// whose static and dynamic shared memory pass 64 KiB; the CPU runtime does the same with this.
#pragma once

#include "status.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hkb::detail {

class CpuSharedUsage {
 public:
  // Reads an ELF64 shared object. `dynamic_names` lists the module's dynamic shared arrays
  // (space-separated), which are not static. A module without a symbol table or kept relocations
  // gives an empty usage (known() false), not an error; tables that do not fit the file or have
  // entries other than ELF64's 24 bytes are HKB_ERROR_CORRUPT_BUNDLE.
  static Status read(const uint8_t* elf, size_t size, std::string_view dynamic_names,
                     CpuSharedUsage* out);
  bool known() const { return known_; }
  // Static shared bytes reachable from function `symbol`; false if the module has no such function.
  bool static_bytes(const std::string& symbol, uint64_t* bytes) const;

 private:
  struct Function {
    uint64_t addr, size;
    std::vector<uint32_t> calls;  // functions it refers to
    std::vector<uint32_t> tls;    // thread-local variables it refers to
  };
  struct Variable {
    uint64_t offset, size;
    bool shared;  // a static __shared__ variable (not the platform's, not a dynamic array)
  };
  bool known_ = false;
  std::vector<Function> functions_;  // by address
  std::vector<Variable> variables_;
  std::unordered_map<std::string, uint32_t> by_name_;
};

}  // namespace hkb::detail
