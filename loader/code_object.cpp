#include "code_object.hpp"

#include <cstring>

namespace hkb::detail {

namespace {

constexpr char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
constexpr size_t kBundleMagicLen = sizeof(kBundleMagic) - 1;
// Sanity bounds: a bundle with more entries or longer IDs than this is not one clang wrote.
constexpr uint64_t kMaxEntries = 4096;
constexpr uint64_t kMaxIdLength = 4096;

uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // bundles are little-endian, as is every host hkb supports
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}

void split_features(std::string_view target, std::vector<std::string_view>* features) {
  size_t pos = target.find(':');
  while (pos != std::string_view::npos) {
    const size_t next = target.find(':', pos + 1);
    features->push_back(
        target.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1));
    pos = next;
  }
}

}  // namespace

bool has_bundle_magic(const uint8_t* data, size_t size) {
  return size >= kBundleMagicLen && std::memcmp(data, kBundleMagic, kBundleMagicLen) == 0;
}

bool is_elf(const uint8_t* data, size_t size) {
  return size >= 4 && data[0] == 0x7F && data[1] == 'E' && data[2] == 'L' && data[3] == 'F';
}

bool is_cuda_fatbin(const uint8_t* data, size_t size) {
  // fatbinary container magic 0xBA55ED50, little-endian
  return size >= 16 && data[0] == 0x50 && data[1] == 0xED && data[2] == 0x55 && data[3] == 0xBA;
}

Status parse_offload_bundle(const uint8_t* data, size_t size, std::string_view origin,
                            std::vector<BundleEntry>* entries) {
  const std::string where(origin);
  if (!has_bundle_magic(data, size)) {
    return error(HKB_ERROR_CORRUPT_BUNDLE, where + ": not a clang offload bundle (bad magic)");
  }
  size_t pos = kBundleMagicLen;
  if (size - pos < 8) {
    return error(HKB_ERROR_CORRUPT_BUNDLE, where + ": truncated bundle header");
  }
  const uint64_t count = read_u64(data + pos);
  pos += 8;
  if (count == 0 || count > kMaxEntries) {
    return error(HKB_ERROR_CORRUPT_BUNDLE,
                 where + ": implausible bundle entry count " + std::to_string(count));
  }
  entries->clear();
  for (uint64_t i = 0; i < count; ++i) {
    if (size - pos < 24) {
      return error(HKB_ERROR_CORRUPT_BUNDLE,
                   where + ": truncated bundle entry table (entry " + std::to_string(i) + ")");
    }
    BundleEntry e;
    e.offset = read_u64(data + pos);
    e.size = read_u64(data + pos + 8);
    const uint64_t id_len = read_u64(data + pos + 16);
    pos += 24;
    if (id_len == 0 || id_len > kMaxIdLength || id_len > size - pos) {
      return error(HKB_ERROR_CORRUPT_BUNDLE,
                   where + ": bad entry ID length in bundle entry " + std::to_string(i));
    }
    e.id.assign(reinterpret_cast<const char*>(data + pos), id_len);
    pos += id_len;
    if (e.offset > size || e.size > size - e.offset) {
      return error(HKB_ERROR_CORRUPT_BUNDLE,
                   where + ": bundle entry '" + e.id + "' lies past the end of the file (offset " +
                       std::to_string(e.offset) + ", size " + std::to_string(e.size) + ", file " +
                       std::to_string(size) + " bytes): truncated?");
    }
    // ID: <kind>-<arch>-<vendor>-<os>-<env>[-<target id>]
    std::vector<std::string> parts;
    size_t start = 0;
    for (int k = 0; k < 5; ++k) {
      const size_t dash = e.id.find('-', start);
      if (dash == std::string::npos) {
        parts.push_back(e.id.substr(start));
        start = e.id.size();
        break;
      }
      parts.push_back(e.id.substr(start, dash - start));
      start = dash + 1;
    }
    if (parts.size() < 4) {
      return error(HKB_ERROR_CORRUPT_BUNDLE, where + ": malformed bundle entry ID '" + e.id + "'");
    }
    e.kind = parts[0];
    e.triple =
        parts[1] + "-" + parts[2] + "-" + parts[3] + "-" + (parts.size() > 4 ? parts[4] : "");
    e.target = start < e.id.size() ? e.id.substr(start) : "";
    if (e.kind == "host") {  // host entries carry a 4-part triple and no target
      e.triple = e.id.substr(e.kind.size() + 1);
      e.target.clear();
    }
    entries->push_back(std::move(e));
  }
  return Status::ok();
}

std::string target_processor(std::string_view target_id) {
  return std::string(target_id.substr(0, target_id.find(':')));
}

bool target_compatible(std::string_view code_target, std::string_view device_target) {
  if (target_processor(code_target) != target_processor(device_target)) return false;
  std::vector<std::string_view> code_features, device_features;
  split_features(code_target, &code_features);
  split_features(device_target, &device_features);
  for (std::string_view f : code_features) {
    if (f.empty()) return false;
    const std::string_view name = f.substr(0, f.size() - 1);
    for (std::string_view d : device_features) {
      if (d.substr(0, d.size() - 1) == name && d != f) return false;
    }
  }
  return true;
}

std::vector<std::string> bundle_targets(const std::vector<BundleEntry>& entries) {
  std::vector<std::string> t;
  for (const auto& e : entries) {
    if (e.is_amdgpu()) t.push_back(e.target);
  }
  return t;
}

Status select_amd_image(const uint8_t* data, size_t size, std::string_view device_target,
                        std::string_view origin, SelectedImage* out) {
  const std::string where(origin);
  if (is_elf(data, size)) {
    *out = SelectedImage{data, size, ""};
    return Status::ok();
  }
  std::vector<BundleEntry> entries;
  HKB_RETURN_IF_ERROR(parse_offload_bundle(data, size, origin, &entries));
  const BundleEntry* best = nullptr;
  size_t best_features = 0;
  for (const auto& e : entries) {
    if (!e.is_amdgpu() || !target_compatible(e.target, device_target)) continue;
    std::vector<std::string_view> f;
    split_features(e.target, &f);
    if (best == nullptr || f.size() > best_features) best = &e, best_features = f.size();
  }
  if (best == nullptr) {
    return error(HKB_ERROR_TARGET_MISSING,
                 where + " has no code object for device target " + std::string(device_target) +
                     " (bundle targets: " + join(bundle_targets(entries)) +
                     "); rebuild with that target in HKB_AMDGPU_TARGETS");
  }
  if (best->size == 0 || !is_elf(data + best->offset, best->size)) {
    return error(HKB_ERROR_CORRUPT_BUNDLE,
                 where + ": the entry for " + best->target + " is not an ELF code object");
  }
  *out = SelectedImage{data + best->offset, static_cast<size_t>(best->size), best->target};
  return Status::ok();
}

Status check_nvidia_image(const uint8_t* data, size_t size, std::string_view origin) {
  if (is_cuda_fatbin(data, size) || is_elf(data, size)) return Status::ok();
  return error(HKB_ERROR_CORRUPT_BUNDLE, std::string(origin) +
                                             ": neither a CUDA fatbin nor a cubin (bad magic, " +
                                             std::to_string(size) + " bytes)");
}

}  // namespace hkb::detail
