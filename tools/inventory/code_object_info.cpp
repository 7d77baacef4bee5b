#include "code_object_info.hpp"

#include "bundle_source.hpp"
#include "msgpack.hpp"

#include <algorithm>
#include <cstring>
#include <map>

namespace hkb_tool {

namespace {

using hkb::detail::error;

constexpr uint16_t kEmAmdgpu = 224;
constexpr uint16_t kEmCuda = 190;
constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtNote = 7;
constexpr uint32_t kPtNote = 4;
constexpr uint32_t kNtAmdgpuMetadata = 32;  // https://llvm.org/docs/AMDGPUUsage.html#note-records

template <typename T>
T rd(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;  // ELF64 little-endian and fatbin containers only, as on every supported host
}

Status corrupt(std::string_view origin, const std::string& what) {
  return error(HKB_ERROR_CORRUPT_BUNDLE, std::string(origin) + ": " + what);
}

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  bool nobits = false;
};

// A minimal ELF64 little-endian view: header fields and section table, every range checked
// against the file size before it is read.
class Elf {
 public:
  Status open(const uint8_t* data, size_t size, std::string_view origin) {
    data_ = data, size_ = size, origin_ = origin;
    if (!hkb::detail::is_elf(data, size)) return corrupt(origin, "not an ELF file (bad magic)");
    if (size < 64) return corrupt(origin, "truncated ELF header");
    if (data[4] != 2 || data[5] != 1) return corrupt(origin, "not a 64-bit little-endian ELF");
    machine_ = rd<uint16_t>(data + 18);
    flags_ = rd<uint32_t>(data + 48);
    const uint64_t shoff = rd<uint64_t>(data + 40);
    const uint16_t shentsize = rd<uint16_t>(data + 58);
    const uint16_t shnum = rd<uint16_t>(data + 60);
    const uint16_t shstrndx = rd<uint16_t>(data + 62);
    phoff_ = rd<uint64_t>(data + 32);
    phentsize_ = rd<uint16_t>(data + 54);
    phnum_ = rd<uint16_t>(data + 56);
    if (phnum_ != 0 &&
        (phentsize_ < 56 || phoff_ > size || uint64_t{phnum_} * phentsize_ > size - phoff_)) {
      return corrupt(origin, "program header table lies outside the file (truncated?)");
    }
    if (shnum == 0) return Status::ok();
    if (shentsize < 64 || shoff > size || uint64_t{shnum} * shentsize > size - shoff) {
      return corrupt(origin, "section header table lies outside the file (truncated?)");
    }
    sections_.resize(shnum);
    std::vector<uint32_t> name_offsets(shnum);
    for (uint16_t i = 0; i < shnum; ++i) {
      const uint8_t* h = data + shoff + uint64_t{i} * shentsize;
      Section& s = sections_[i];
      name_offsets[i] = rd<uint32_t>(h);
      s.type = rd<uint32_t>(h + 4);
      s.offset = rd<uint64_t>(h + 24);
      s.size = rd<uint64_t>(h + 32);
      s.link = rd<uint32_t>(h + 40);
      s.nobits = s.type == 8;
      if (!s.nobits && (s.offset > size || s.size > size - s.offset)) {
        return corrupt(origin,
                       "section " + std::to_string(i) + " lies outside the file (truncated?)");
      }
    }
    if (shstrndx >= shnum) return corrupt(origin, "bad section name table index");
    const Section& strtab = sections_[shstrndx];
    for (uint16_t i = 0; i < shnum; ++i) {
      if (!cstring(strtab, name_offsets[i], &sections_[i].name)) {
        return corrupt(origin,
                       "section " + std::to_string(i) + " has a name outside the name table");
      }
    }
    return Status::ok();
  }

  // A NUL-terminated string at `offset` inside string table `s`.
  bool cstring(const Section& s, uint64_t offset, std::string* out) const {
    if (s.nobits || offset >= s.size) return false;
    const char* begin = reinterpret_cast<const char*>(data_ + s.offset + offset);
    const void* nul = std::memchr(begin, 0, s.size - offset);
    if (nul == nullptr) return false;
    out->assign(begin, static_cast<const char*>(nul));
    return true;
  }

  // Names of the defined data objects (STT_OBJECT symbols with a section) of every symbol table.
  std::vector<std::string> object_symbols() const {
    std::vector<std::string> out;
    for (const Section& s : sections_) {
      if (s.type != kShtSymtab || s.nobits || s.link >= sections_.size()) continue;
      for (uint64_t off = 0; off + 24 <= s.size; off += 24) {
        const uint8_t* sym = bytes(s) + off;
        std::string name;
        if ((sym[4] & 0xf) == 1 && rd<uint16_t>(sym + 6) != 0 &&
            cstring(sections_[s.link], rd<uint32_t>(sym), &name)) {
          out.push_back(std::move(name));
        }
      }
    }
    return out;
  }

  const uint8_t* bytes(const Section& s) const { return data_ + s.offset; }
  uint16_t machine() const { return machine_; }
  uint32_t flags() const { return flags_; }
  const std::vector<Section>& sections() const { return sections_; }

  // Ranges of note data: SHT_NOTE sections, or PT_NOTE segments when there are no sections.
  std::vector<std::pair<const uint8_t*, uint64_t>> note_ranges() const {
    std::vector<std::pair<const uint8_t*, uint64_t>> r;
    for (const auto& s : sections_) {
      if (s.type == kShtNote) r.emplace_back(bytes(s), s.size);
    }
    if (!r.empty()) return r;
    for (uint16_t i = 0; i < phnum_; ++i) {
      const uint8_t* h = data_ + phoff_ + uint64_t{i} * phentsize_;
      const uint64_t off = rd<uint64_t>(h + 8), filesz = rd<uint64_t>(h + 32);
      if (rd<uint32_t>(h) == kPtNote && off <= size_ && filesz <= size_ - off) {
        r.emplace_back(data_ + off, filesz);
      }
    }
    return r;
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string_view origin_;
  uint16_t machine_ = 0;
  uint32_t flags_ = 0;
  uint64_t phoff_ = 0;
  uint16_t phentsize_ = 0, phnum_ = 0;
  std::vector<Section> sections_;
};

uint64_t align4(uint64_t n) {
  return (n + 3) & ~uint64_t{3};
}

// Finds the NT_AMDGPU_METADATA descriptor (owner "AMDGPU") in the note ranges.
Status find_metadata_note(const Elf& elf, std::string_view origin, const uint8_t** desc,
                          uint64_t* desc_size) {
  for (const auto& [p, n] : elf.note_ranges()) {
    uint64_t pos = 0;
    while (n - pos >= 12) {
      const uint32_t namesz = rd<uint32_t>(p + pos), descsz = rd<uint32_t>(p + pos + 4);
      const uint32_t type = rd<uint32_t>(p + pos + 8);
      pos += 12;
      if (align4(namesz) > n - pos) return corrupt(origin, "note name runs past its section");
      const std::string_view name(reinterpret_cast<const char*>(p + pos), namesz);
      pos += align4(namesz);
      if (descsz > n - pos) return corrupt(origin, "note descriptor runs past its section");
      if (type == kNtAmdgpuMetadata && name == std::string_view("AMDGPU\0", 7)) {
        *desc = p + pos, *desc_size = descsz;
        return Status::ok();
      }
      pos += std::min<uint64_t>(align4(descsz), n - pos);
    }
  }
  return error(HKB_ERROR_CORRUPT_BUNDLE,
               std::string(origin) +
                   ": no NT_AMDGPU_METADATA note (not a code object v3+ AMDGPU ELF, or stripped)");
}

int64_t uint_field(const msgpack::Value& map, std::string_view key) {
  const msgpack::Value* v = map.find(key);
  uint64_t u;
  if (v == nullptr || !v->as_uint(&u) || u > uint64_t{INT64_MAX}) return -1;
  return static_cast<int64_t>(u);
}

Status parse_amdgpu_metadata(const msgpack::Value& root, std::string_view origin,
                             std::vector<KernelMeta>* kernels, std::string* isa_target) {
  if (!root.is_map()) return corrupt(origin, "AMDGPU metadata is not a map");
  if (isa_target != nullptr) {
    const msgpack::Value* t = root.find("amdhsa.target");
    *isa_target = t != nullptr && t->is_string() ? t->str : "";
  }
  const msgpack::Value* list = root.find("amdhsa.kernels");
  if (list == nullptr || !list->is_array()) {
    return corrupt(origin, "AMDGPU metadata has no amdhsa.kernels list");
  }
  kernels->clear();
  for (const msgpack::Value& k : list->array) {
    const msgpack::Value* name = k.find(".name");
    if (!k.is_map() || name == nullptr || !name->is_string() || name->str.empty()) {
      return corrupt(origin, "an amdhsa.kernels entry has no .name");
    }
    KernelMeta m;
    m.name = name->str;
    const msgpack::Value* args = k.find(".args");
    if (args != nullptr && !args->is_array()) {
      return corrupt(origin, "kernel " + m.name + ": .args is not a list");
    }
    if (args != nullptr) {
      for (size_t i = 0; i < args->array.size(); ++i) {
        const msgpack::Value& a = args->array[i];
        const msgpack::Value* kind = a.find(".value_kind");
        const int64_t size = uint_field(a, ".size"), offset = uint_field(a, ".offset");
        if (!a.is_map() || kind == nullptr || !kind->is_string() || size < 0 || offset < 0) {
          return corrupt(origin, "kernel " + m.name + ": argument " + std::to_string(i) +
                                     " lacks .size, .offset or .value_kind");
        }
        if (kind->str.rfind("hidden_", 0) == 0) continue;
        KernelArg arg;
        arg.offset = static_cast<uint64_t>(offset), arg.size = static_cast<uint64_t>(size);
        arg.value_kind = kind->str;
        const msgpack::Value* arg_name = a.find(".name");
        if (arg_name != nullptr && arg_name->is_string()) arg.name = arg_name->str;
        m.args.push_back(std::move(arg));
      }
    }
    m.kernarg_segment_size = uint_field(k, ".kernarg_segment_size");
    m.vgpr_count = uint_field(k, ".vgpr_count");
    m.sgpr_count = uint_field(k, ".sgpr_count");
    m.agpr_count = uint_field(k, ".agpr_count");
    m.vgpr_spill_count = uint_field(k, ".vgpr_spill_count");
    m.sgpr_spill_count = uint_field(k, ".sgpr_spill_count");
    m.group_segment_fixed_size = uint_field(k, ".group_segment_fixed_size");
    m.private_segment_fixed_size = uint_field(k, ".private_segment_fixed_size");
    m.wavefront_size = uint_field(k, ".wavefront_size");
    m.max_flat_workgroup_size = uint_field(k, ".max_flat_workgroup_size");
    kernels->push_back(std::move(m));
  }
  std::sort(kernels->begin(), kernels->end(),
            [](const KernelMeta& a, const KernelMeta& b) { return a.name < b.name; });
  for (size_t i = 1; i < kernels->size(); ++i) {
    if ((*kernels)[i].name == (*kernels)[i - 1].name) {
      return corrupt(origin, "kernel " + (*kernels)[i].name + " appears twice in the metadata");
    }
  }
  return Status::ok();
}

// CUDA cubin attribute records (`.nv.info*`): a format byte, an attribute byte, then the value.
// Records stay 4-byte aligned: the no-value, byte and half-word formats all take a 2-byte value
// slot; the sized format has a 2-byte length and that many bytes.
constexpr uint8_t kEifmtNval = 1, kEifmtBval = 2, kEifmtHval = 3, kEifmtSval = 4;
constexpr uint8_t kEiattrKparamInfo = 0x17;  // index u32, ordinal u16, offset u16, flags u32
constexpr uint8_t kEiattrParamCbank = 0x0a;  // symbol u32, param base u16, param bytes u16
constexpr uint8_t kEiattrRegcount = 0x2f;    // symbol u32, registers u32 (in `.nv.info`)
constexpr uint8_t kEiattrFrameSize = 0x11;   // symbol u32, bytes u32 (in `.nv.info`)

struct NvRecord {
  uint8_t attr;
  const uint8_t* payload;
  uint16_t size;
};

Status nv_records(const uint8_t* p, uint64_t n, std::string_view origin, const std::string& section,
                  std::vector<NvRecord>* out) {
  uint64_t pos = 0;
  while (pos < n) {
    if (n - pos < 2) return corrupt(origin, section + ": truncated attribute record");
    const uint8_t fmt = p[pos], attr = p[pos + 1];
    pos += 2;
    uint64_t len = 0;
    if (fmt == kEifmtNval || fmt == kEifmtBval || fmt == kEifmtHval) {
      len = 2;
    } else if (fmt == kEifmtSval) {
      if (n - pos < 2) return corrupt(origin, section + ": truncated attribute record");
      len = rd<uint16_t>(p + pos);
      pos += 2;
    } else {
      return corrupt(origin, section + ": unknown attribute format " + std::to_string(fmt));
    }
    if (len > n - pos) return corrupt(origin, section + ": attribute record runs past the section");
    out->push_back({attr, p + pos, static_cast<uint16_t>(len)});
    pos += len;
  }
  return Status::ok();
}

}  // namespace

Status read_amdgpu_elf(const uint8_t* data, size_t size, std::string_view origin,
                       std::vector<KernelMeta>* kernels, std::string* isa_target) {
  Elf elf;
  HKB_RETURN_IF_ERROR(elf.open(data, size, origin));
  if (elf.machine() != kEmAmdgpu) {
    return corrupt(origin, "ELF machine " + std::to_string(elf.machine()) + " is not AMDGPU (224)");
  }
  const uint8_t* desc = nullptr;
  uint64_t desc_size = 0;
  HKB_RETURN_IF_ERROR(find_metadata_note(elf, origin, &desc, &desc_size));
  msgpack::Value root;
  std::string why;
  if (!msgpack::decode(desc, desc_size, &root, &why)) {
    return corrupt(origin, "AMDGPU metadata is not valid MessagePack: " + why);
  }
  return parse_amdgpu_metadata(root, origin, kernels, isa_target);
}

Status read_cubin(const uint8_t* data, size_t size, std::string_view origin,
                  std::vector<KernelMeta>* kernels, std::string* sm_target) {
  Elf elf;
  HKB_RETURN_IF_ERROR(elf.open(data, size, origin));
  if (elf.machine() != kEmCuda) {
    return corrupt(origin, "ELF machine " + std::to_string(elf.machine()) + " is not CUDA (190)");
  }
  // sm_XX: the low byte of e_flags for older cubins, bits 8..15 for the ELF ABI of CUDA 12.8+.
  if (sm_target != nullptr) {
    const uint32_t f = elf.flags();
    const uint32_t sm = (f & 0xff) >= 20 ? (f & 0xff) : ((f >> 8) & 0xff);
    *sm_target = "sm_" + std::to_string(sm);
  }
  const auto& sections = elf.sections();
  // Symbol index -> name, for the per-symbol attributes of the global `.nv.info` section.
  std::map<uint32_t, std::string> symbol_names;
  for (const Section& s : sections) {
    if (s.type != kShtSymtab || s.link >= sections.size()) continue;
    for (uint64_t off = 0; off + 24 <= s.size; off += 24) {
      std::string name;
      if (elf.cstring(sections[s.link], rd<uint32_t>(elf.bytes(s) + off), &name)) {
        symbol_names[static_cast<uint32_t>(off / 24)] = name;
      }
    }
  }
  std::map<std::string, KernelMeta> found;
  const std::string prefix = ".nv.info.";
  for (const Section& s : sections) {
    if (s.name.rfind(prefix, 0) != 0 || s.nobits) continue;
    KernelMeta m;
    m.name = s.name.substr(prefix.size());
    std::vector<NvRecord> records;
    HKB_RETURN_IF_ERROR(nv_records(elf.bytes(s), s.size, origin, s.name, &records));
    std::map<uint16_t, KernelArg> by_ordinal;
    for (const NvRecord& r : records) {
      if (r.attr == kEiattrKparamInfo) {
        if (r.size < 12) return corrupt(origin, s.name + ": short EIATTR_KPARAM_INFO record");
        KernelArg a;
        const uint16_t ordinal = rd<uint16_t>(r.payload + 4);
        a.offset = rd<uint16_t>(r.payload + 6);
        a.size = (rd<uint32_t>(r.payload + 8) >> 18) & 0x3fff;
        a.value_kind = "param";
        if (!by_ordinal.emplace(ordinal, a).second) {
          return corrupt(origin, s.name + ": parameter ordinal " + std::to_string(ordinal) +
                                     " described twice");
        }
      } else if (r.attr == kEiattrParamCbank && r.size >= 8) {
        m.kernarg_segment_size = rd<uint16_t>(r.payload + 6);
      }
    }
    uint16_t expect = 0;
    for (auto& [ordinal, arg] : by_ordinal) {
      if (ordinal != expect++) {
        return corrupt(origin, s.name + ": parameter ordinals are not 0..n-1");
      }
      m.args.push_back(arg);
    }
    found[m.name] = std::move(m);
  }
  for (const Section& s : sections) {
    if (s.name == ".nv.info" && !s.nobits) {
      std::vector<NvRecord> records;
      HKB_RETURN_IF_ERROR(nv_records(elf.bytes(s), s.size, origin, s.name, &records));
      for (const NvRecord& r : records) {
        if ((r.attr != kEiattrRegcount && r.attr != kEiattrFrameSize) || r.size < 8) continue;
        auto name = symbol_names.find(rd<uint32_t>(r.payload));
        if (name == symbol_names.end()) continue;
        auto k = found.find(name->second);
        if (k == found.end()) continue;
        (r.attr == kEiattrRegcount ? k->second.vgpr_count : k->second.private_segment_fixed_size) =
            rd<uint32_t>(r.payload + 4);
      }
    } else if (s.name.rfind(".nv.shared.", 0) == 0) {
      auto k = found.find(s.name.substr(11));
      if (k != found.end()) k->second.group_segment_fixed_size = static_cast<int64_t>(s.size);
    }
  }
  kernels->clear();
  for (auto& [name, m] : found) {
    m.wavefront_size = 32;
    kernels->push_back(std::move(m));
  }
  return Status::ok();
}

Status read_elf_globals(const uint8_t* data, size_t size, std::string_view origin,
                        std::vector<std::string>* globals) {
  Elf elf;
  HKB_RETURN_IF_ERROR(elf.open(data, size, origin));
  *globals = elf.object_symbols();
  std::sort(globals->begin(), globals->end());
  return Status::ok();
}

namespace {

// CUDA fatbin container: a 16-byte header (magic 0xBA55ED50, version u16, header size u16,
// payload size u64), then entries, each with its own header: kind u16 (1 PTX, 2 ELF),
// header size u32 at 4, payload size u64 at 8, SM architecture u32 at 28, flags u64 at 40
// (0x2000: compressed payload; 0x8000: zstd-compressed payload, nvcc 12.8 and later).
constexpr uint64_t kFatbinFlagCompressed = 0x2000;
constexpr uint64_t kFatbinFlagZstd = 0x8000;

Status read_fatbin(const uint8_t* data, size_t size, std::string_view origin,
                   std::vector<TargetImage>* images) {
  uint64_t pos = 0;
  while (size - pos >= 16 && hkb::detail::is_cuda_fatbin(data + pos, size - pos)) {
    const uint16_t header_size = rd<uint16_t>(data + pos + 6);
    const uint64_t fat_size = rd<uint64_t>(data + pos + 8);
    if (header_size < 16 || header_size > size - pos || fat_size > size - pos - header_size) {
      return corrupt(origin, "fatbin header claims more bytes than the file has (truncated?)");
    }
    uint64_t e = pos + header_size;
    const uint64_t end = e + fat_size;
    while (end - e >= 16) {
      if (end - e < 48) return corrupt(origin, "truncated fatbin entry header");
      const uint16_t kind = rd<uint16_t>(data + e);
      const uint32_t entry_header = rd<uint32_t>(data + e + 4);
      const uint64_t payload = rd<uint64_t>(data + e + 8);
      const uint32_t arch = rd<uint32_t>(data + e + 28);
      const uint64_t flags = rd<uint64_t>(data + e + 40);
      if (entry_header < 48 || entry_header > end - e || payload > end - e - entry_header) {
        return corrupt(origin, "fatbin entry lies outside the container (truncated?)");
      }
      if (kind == 2) {
        TargetImage img;
        img.kind = ImageKind::kCubin;
        img.target = "sm_" + std::to_string(arch);
        const std::string where = std::string(origin) + " [" + img.target + "]";
        if (flags & (kFatbinFlagCompressed | kFatbinFlagZstd)) {
          img.note =
              "compressed cubin; its parameter layout was not checked (build with nvcc "
              "--no-compress, or inspect it with cuobjdump -elf)";
        } else {
          HKB_RETURN_IF_ERROR(read_cubin(data + e + entry_header, payload, where, &img.kernels));
          HKB_RETURN_IF_ERROR(
              read_elf_globals(data + e + entry_header, payload, where, &img.globals));
        }
        images->push_back(std::move(img));
      }
      e += entry_header + payload;
    }
    pos = end;
    while (pos < size && pos % 8 != 0 && data[pos] == 0) ++pos;
  }
  if (images->empty()) return corrupt(origin, "fatbin holds no cubin (SASS) entry");
  return Status::ok();
}

}  // namespace

Status read_module_file(const uint8_t* data, size_t size, std::string_view origin,
                        std::vector<TargetImage>* images) {
  images->clear();
  if (hkb::detail::has_bundle_magic(data, size)) {
    std::vector<hkb::detail::BundleEntry> entries;
    HKB_RETURN_IF_ERROR(hkb::detail::parse_offload_bundle(data, size, origin, &entries));
    for (const auto& e : entries) {
      if (!e.is_amdgpu()) continue;
      TargetImage img;
      img.target = e.target;
      const std::string where = std::string(origin) + " [" + e.target + "]";
      HKB_RETURN_IF_ERROR(read_amdgpu_elf(data + e.offset, e.size, where, &img.kernels));
      HKB_RETURN_IF_ERROR(read_elf_globals(data + e.offset, e.size, where, &img.globals));
      images->push_back(std::move(img));
    }
    if (images->empty()) {
      return error(HKB_ERROR_TARGET_MISSING,
                   std::string(origin) + ": the bundle holds no AMDGPU code object entry");
    }
    return Status::ok();
  }
  if (hkb::detail::is_cuda_fatbin(data, size)) return read_fatbin(data, size, origin, images);
  if (hkb::detail::is_elf(data, size)) {
    TargetImage img;
    if (size >= 20 && rd<uint16_t>(data + 18) == kEmCuda) {
      img.kind = ImageKind::kCubin;
      HKB_RETURN_IF_ERROR(read_cubin(data, size, origin, &img.kernels, &img.target));
    } else {
      std::string isa;
      HKB_RETURN_IF_ERROR(read_amdgpu_elf(data, size, origin, &img.kernels, &isa));
      // "amdgcn-amd-amdhsa--gfx90a:xnack-" -> "gfx90a:xnack-"
      const size_t dd = isa.find("--");
      img.target = dd == std::string::npos ? isa : isa.substr(dd + 2);
    }
    HKB_RETURN_IF_ERROR(read_elf_globals(data, size, origin, &img.globals));
    images->push_back(std::move(img));
    return Status::ok();
  }
  return corrupt(origin,
                 "not a code object (neither a clang offload bundle, an ELF nor a CUDA "
                 "fatbin; " +
                     std::to_string(size) + " bytes)");
}

Status read_file_bytes(const std::string& path, std::vector<uint8_t>* out) {
  return hkb::detail::read_regular_file(path, hkb::detail::kMaxInputFileBytes, out);
}

}  // namespace hkb_tool
