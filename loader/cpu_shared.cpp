#include "cpu_shared.hpp"

#include <algorithm>
#include <cstring>
#include <set>

namespace hkb::detail {

namespace {

template <typename T>
T get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;  // little-endian, as every host the CPU platform runs on
}

struct Section {
  uint32_t name, type;
  uint64_t flags, addr, offset, size;
  uint32_t link, info;
  uint64_t entsize;
};

constexpr uint32_t kSymtab = 2, kRela = 4, kNobits = 8;
constexpr uint64_t kEntry = 24;  // ELF64's fixed Elf64_Sym and Elf64_Rela size
constexpr uint64_t kExecInstr = 0x4;
constexpr uint8_t kFunc = 2, kSection = 3, kTls = 6;
constexpr uint16_t kMachineX86_64 = 62;
constexpr uint32_t kX86Pc32 = 2, kX86Plt32 = 4;

// The CPU platform's own thread-locals (threadIdx, its scheduler state) and C++ guard variables
// (_ZGV*, and __tls_guard: a translation unit's flag that its thread-locals are constructed).
bool platform_variable(std::string_view name) {
  return name == "threadIdx" || name == "blockIdx" || name == "blockDim" || name == "gridDim" ||
         name == "__tls_guard" || name.rfind("_ZN7hkb_cpu", 0) == 0 || name.rfind("_ZGV", 0) == 0;
}

// `name` is one of the dynamic arrays: plain, or mangled as <length><name>E.
bool dynamic_array(std::string_view name, std::string_view dynamic_names) {
  size_t pos = 0;
  while (pos < dynamic_names.size()) {
    size_t end = dynamic_names.find(' ', pos);
    if (end == std::string_view::npos) end = dynamic_names.size();
    const std::string_view d = dynamic_names.substr(pos, end - pos);
    pos = end + 1;
    if (d.empty()) continue;
    const std::string mangled = std::to_string(d.size()) + std::string(d) + "E";
    if (name == d || (name.size() > mangled.size() &&
                      name.compare(name.size() - mangled.size(), mangled.size(), mangled) == 0))
      return true;
  }
  return false;
}

}  // namespace

Status CpuSharedUsage::read(const uint8_t* elf, size_t size, std::string_view dynamic_names,
                            CpuSharedUsage* out) {
  *out = CpuSharedUsage();
  auto corrupt = [](const std::string& why) {
    return error(HKB_ERROR_CORRUPT_BUNDLE, "CPU module: " + why);
  };
  if (size < 64 ||
      std::memcmp(elf,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      elf[4] != 2)
    return corrupt("not an ELF64 shared object");
  const uint16_t machine = get<uint16_t>(elf + 18);
  const uint64_t shoff = get<uint64_t>(elf + 40);
  const uint16_t shentsize = get<uint16_t>(elf + 58), shnum = get<uint16_t>(elf + 60);
  if (shentsize < 64 || shoff > size || uint64_t{shnum} * shentsize > size - shoff)
    return corrupt("section headers past the end of the file");
  std::vector<Section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint8_t* h = elf + shoff + uint64_t{i} * shentsize;
    Section& s = sections[i];
    s = Section{get<uint32_t>(h),      get<uint32_t>(h + 4),  get<uint64_t>(h + 8),
                get<uint64_t>(h + 16), get<uint64_t>(h + 24), get<uint64_t>(h + 32),
                get<uint32_t>(h + 40), get<uint32_t>(h + 44), get<uint64_t>(h + 56)};
    if (s.type != kNobits && (s.offset > size || s.size > size - s.offset))
      return corrupt("section " + std::to_string(i) + " past the end of the file");
  }
  const Section* symtab = nullptr;
  for (const Section& s : sections)
    if (s.type == kSymtab) symtab = &s;
  if (symtab == nullptr) return Status::ok();
  // Any other entry size would step past the checked sections.
  if (symtab->entsize != kEntry || symtab->link >= shnum || sections[symtab->link].type == kNobits)
    return corrupt("symbol table with a bad entry size or string table");
  const Section& strtab = sections[symtab->link];
  auto name_at = [&](uint32_t off) -> std::string_view {
    if (off >= strtab.size) return {};
    const char* p = reinterpret_cast<const char*>(elf + strtab.offset + off);
    return std::string_view(p, strnlen(p, strtab.size - off));
  };

  // Symbols: functions (sorted by address), thread-local variables (by TLS offset).
  const size_t nsyms = symtab->size / kEntry;
  std::vector<int64_t> sym_function(nsyms, -1), sym_variable(nsyms, -1);
  std::vector<std::pair<uint64_t, uint32_t>> order;
  struct Sym {
    std::string_view name;
    uint8_t type;
    uint16_t shndx;
    uint64_t value, size;
  };
  std::vector<Sym> syms(nsyms);
  for (size_t i = 0; i < nsyms; ++i) {
    const uint8_t* e = elf + symtab->offset + i * kEntry;
    syms[i] = Sym{name_at(get<uint32_t>(e)), static_cast<uint8_t>(e[4] & 0xF), get<uint16_t>(e + 6),
                  get<uint64_t>(e + 8), get<uint64_t>(e + 16)};
    if (syms[i].type == kFunc && syms[i].shndx != 0 && syms[i].size > 0)
      order.push_back({syms[i].value, static_cast<uint32_t>(i)});
  }
  std::sort(order.begin(), order.end());
  for (const auto& [addr, i] : order) {
    if (!out->functions_.empty() && out->functions_.back().addr == addr) {
      sym_function[i] = static_cast<int64_t>(out->functions_.size() - 1);  // an alias
    } else {
      sym_function[i] = static_cast<int64_t>(out->functions_.size());
      out->functions_.push_back(Function{addr, syms[i].size, {}, {}});
    }
    out->by_name_.emplace(std::string(syms[i].name), static_cast<uint32_t>(sym_function[i]));
  }
  std::unordered_map<uint64_t, uint32_t> tls_by_offset;
  for (size_t i = 0; i < nsyms; ++i) {
    if (syms[i].type != kTls) continue;
    auto [it, fresh] =
        tls_by_offset.emplace(syms[i].value, static_cast<uint32_t>(out->variables_.size()));
    if (fresh) {
      out->variables_.push_back(Variable{
          syms[i].value, syms[i].size,
          !platform_variable(syms[i].name) && !dynamic_array(syms[i].name, dynamic_names)});
    }
    sym_variable[i] = it->second;
  }
  auto function_at = [&](uint64_t addr) -> int64_t {
    auto it = std::upper_bound(out->functions_.begin(), out->functions_.end(), addr,
                               [](uint64_t a, const Function& f) { return a < f.addr; });
    if (it == out->functions_.begin()) return -1;
    --it;
    return addr < it->addr + it->size ? it - out->functions_.begin() : -1;
  };

  // Relocations kept in code: who refers to which function and thread-local variable.
  bool any = false;
  for (const Section& rela : sections) {
    if (rela.type != kRela || rela.link != static_cast<uint32_t>(symtab - sections.data()) ||
        rela.info >= shnum || !(sections[rela.info].flags & kExecInstr))
      continue;
    if (rela.entsize != kEntry)
      return corrupt("relocation section with entries of " + std::to_string(rela.entsize) +
                     " bytes, not 24");
    any = true;
    for (uint64_t off = 0; off + kEntry <= rela.size; off += kEntry) {
      const uint8_t* r = elf + rela.offset + off;
      const int64_t from = function_at(get<uint64_t>(r));
      const uint64_t info = get<uint64_t>(r + 8);
      const uint32_t sym = static_cast<uint32_t>(info >> 32), type = info & 0xFFFFFFFF;
      if (from < 0 || sym >= nsyms) continue;
      Function& f = out->functions_[from];
      if (sym_variable[sym] >= 0) {
        f.tls.push_back(static_cast<uint32_t>(sym_variable[sym]));
        continue;
      }
      int64_t to = sym_function[sym];
      if (to < 0 && syms[sym].type == kSection && syms[sym].shndx < shnum) {
        // Unsigned: a crafted addend wraps instead of overflowing.
        uint64_t target = sections[syms[sym].shndx].addr + get<uint64_t>(r + 16);
        if (machine == kMachineX86_64 && (type == kX86Pc32 || type == kX86Plt32)) target += 4;
        to = function_at(target);
      }
      if (to >= 0 && to != from) f.calls.push_back(static_cast<uint32_t>(to));
    }
  }
  out->known_ = any;
  return Status::ok();
}

bool CpuSharedUsage::static_bytes(const std::string& symbol, uint64_t* bytes) const {
  const auto it = by_name_.find(symbol);
  if (it == by_name_.end()) return false;
  std::vector<bool> seen(functions_.size());
  std::set<uint32_t> vars;
  std::vector<uint32_t> stack{it->second};
  seen[it->second] = true;
  while (!stack.empty()) {
    const Function& f = functions_[stack.back()];
    stack.pop_back();
    for (uint32_t v : f.tls)
      if (variables_[v].shared) vars.insert(v);
    for (uint32_t c : f.calls)
      if (!seen[c]) seen[c] = true, stack.push_back(c);
  }
  *bytes = 0;
  for (uint32_t v : vars) *bytes += variables_[v].size;
  return true;
}

}  // namespace hkb::detail
