#include "manifest.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace hkb::detail {

namespace {

struct TypeInfo {
  std::string_view name;
  ParamKind kind;
  uint32_t size;
};

constexpr TypeInfo kScalars[] = {
    {"usize", ParamKind::kUsize, 8}, {"u8", ParamKind::kU8, 1},         {"u16", ParamKind::kU16, 2},
    {"u32", ParamKind::kU32, 4},     {"u64", ParamKind::kU64, 8},       {"i16", ParamKind::kI16, 2},
    {"i32", ParamKind::kI32, 4},     {"i64", ParamKind::kI64, 8},       {"f16", ParamKind::kF16, 2},
    {"bf16", ParamKind::kBf16, 2},   {"f8e4m3", ParamKind::kF8E4M3, 1}, {"f32", ParamKind::kF32, 4},
    {"f64", ParamKind::kF64, 8},     {"bool", ParamKind::kBool, 1},
};

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The optional "launch" field of a module or kernel entry; *rule keeps its value when absent.
Status read_launch_rule(const nlohmann::json& entry, const std::string& where,
                        const std::string& what, LaunchRule* rule) {
  if (!entry.contains("launch")) return Status::ok();
  const nlohmann::json& v = entry["launch"];
  if (!v.is_string() || !parse_launch_rule(v.get<std::string>(), rule)) {
    return error(HKB_ERROR_CORRUPT_MANIFEST, "manifest " + where + ": " + what +
                                                 ": \"launch\" must be \"resident\" or "
                                                 "\"for_num_elems\", not " +
                                                 v.dump());
  }
  return Status::ok();
}

// Bytes of a data pointer's element ("const bf16*": 2); 0 for scalars, void and the usize layout
// arrays.
uint32_t element_bytes(std::string_view type) {
  if (type.empty() || type.back() != '*') return 0;
  type.remove_suffix(1);
  ParamKind kind;
  uint32_t size = 0, align = 0;
  if (!parse_param_type(type, &kind, &size, &align) || kind == ParamKind::kUsize) return 0;
  return size;
}

}  // namespace

bool parse_param_type(std::string_view type, ParamKind* kind, uint32_t* size, uint32_t* align) {
  std::string_view t = type;
  if (t.substr(0, 6) == "const ") t.remove_prefix(6);
  const bool pointer = !t.empty() && t.back() == '*';
  if (pointer) t.remove_suffix(1);
  // void only as a pointee: candle's raw byte buffers (quantized blocks) are `const void*`.
  if (pointer && t == "void") {
    *kind = ParamKind::kPointer, *size = 8, *align = 8;
    return true;
  }
  for (const TypeInfo& s : kScalars) {
    if (s.name == t) {
      if (pointer) {
        *kind = ParamKind::kPointer, *size = 8, *align = 8;
      } else {
        *kind = s.kind, *size = s.size, *align = s.size;
      }
      return true;
    }
  }
  return false;
}

bool parse_launch_rule(std::string_view value, LaunchRule* rule) {
  if (value == "resident") {
    *rule = LaunchRule::kResident;
  } else if (value == "for_num_elems") {
    *rule = LaunchRule::kForNumElems;
  } else {
    return false;
  }
  return true;
}

int64_t Manifest::find(std::string_view name) const noexcept {
  auto it = std::lower_bound(kernels.begin(), kernels.end(), name,
                             [](const KernelInfo& k, std::string_view n) { return k.name < n; });
  if (it == kernels.end() || it->name != name) return -1;
  return it - kernels.begin();
}

int64_t Manifest::module_index(std::string_view module) const noexcept {
  auto it = std::lower_bound(modules.begin(), modules.end(), module);
  if (it == modules.end() || *it != module) return -1;
  return it - modules.begin();
}

std::vector<std::string> Manifest::nearest(std::string_view name, size_t n) const {
  std::vector<std::pair<size_t, const std::string*>> scored;
  scored.reserve(kernels.size());
  for (const KernelInfo& k : kernels) scored.emplace_back(edit_distance(name, k.name), &k.name);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(*scored[i].second);
  return out;
}

Status parse_manifest(std::string_view json, std::string_view origin, Manifest* out) {
  const std::string where(origin);
  nlohmann::json doc = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  if (doc.is_discarded()) {
    return error(HKB_ERROR_CORRUPT_MANIFEST,
                 "manifest " + where + ": not valid JSON (truncated or corrupt)");
  }
  std::vector<const nlohmann::json*> module_docs;
  if (doc.is_object() && doc.contains("modules")) {
    if (!doc["modules"].is_array()) {
      return error(HKB_ERROR_CORRUPT_MANIFEST, "manifest " + where + ": \"modules\" is not a list");
    }
    for (const auto& m : doc["modules"]) module_docs.push_back(&m);
  } else {
    module_docs.push_back(&doc);
  }

  Manifest m;
  std::map<std::string, std::string> seen;  // kernel -> module, for duplicate messages
  std::vector<std::pair<std::string, KernelInfo>> kernels;
  for (const nlohmann::json* md : module_docs) {
    if (!md->is_object() || !md->contains("module") || !(*md)["module"].is_string() ||
        !md->contains("kernels") || !(*md)["kernels"].is_array()) {
      return error(HKB_ERROR_CORRUPT_MANIFEST,
                   "manifest " + where + ": a module entry lacks \"module\" or \"kernels\"");
    }
    const std::string module = (*md)["module"].get<std::string>();
    if (std::find(m.modules.begin(), m.modules.end(), module) != m.modules.end()) {
      return error(HKB_ERROR_CORRUPT_MANIFEST,
                   "manifest " + where + ": module '" + module + "' listed twice");
    }
    m.modules.push_back(module);
    LaunchRule module_rule = LaunchRule::kNone;
    HKB_RETURN_IF_ERROR(read_launch_rule(*md, where, "module '" + module + "'", &module_rule));
    for (const auto& k : (*md)["kernels"]) {
      if (!k.is_object() || !k.contains("name") || !k["name"].is_string() ||
          !k.contains("params") || !k["params"].is_array()) {
        return error(HKB_ERROR_CORRUPT_MANIFEST, "manifest " + where + ": a kernel of module '" +
                                                     module + "' lacks \"name\" or \"params\"");
      }
      KernelInfo info;
      info.name = k["name"].get<std::string>();
      if (info.name.empty()) {
        return error(HKB_ERROR_CORRUPT_MANIFEST,
                     "manifest " + where + ": empty kernel name in module '" + module + "'");
      }
      info.launch = module_rule;
      HKB_RETURN_IF_ERROR(read_launch_rule(k, where, "kernel '" + info.name + "'", &info.launch));
      auto [it, fresh] = seen.emplace(info.name, module);
      if (!fresh) {
        return error(HKB_ERROR_CORRUPT_MANIFEST, "manifest " + where + ": kernel '" + info.name +
                                                     "' listed twice (modules '" + it->second +
                                                     "' and '" + module + "')");
      }
      for (const auto& p : k["params"]) {
        if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string()) {
          return error(HKB_ERROR_CORRUPT_MANIFEST, "manifest " + where + ": kernel '" + info.name +
                                                       "': each parameter must be [name, type]");
        }
        Param param;
        param.name = p[0].get<std::string>();
        param.type = p[1].get<std::string>();
        if (!parse_param_type(param.type, &param.kind, &param.size, &param.align)) {
          return error(HKB_ERROR_CORRUPT_MANIFEST, "manifest " + where + ": kernel '" + info.name +
                                                       "': unknown parameter type '" + param.type +
                                                       "'");
        }
        info.element_bytes = std::max(info.element_bytes, element_bytes(param.type));
        info.params.push_back(std::move(param));
      }
      kernels.emplace_back(module, std::move(info));
    }
  }
  if (kernels.empty()) {
    return error(HKB_ERROR_CORRUPT_MANIFEST, "manifest " + where + ": lists no kernels");
  }
  std::sort(m.modules.begin(), m.modules.end());
  for (auto& [module, info] : kernels) {
    info.module = static_cast<uint32_t>(m.module_index(module));
    m.kernels.push_back(std::move(info));
  }
  std::sort(m.kernels.begin(), m.kernels.end(),
            [](const KernelInfo& a, const KernelInfo& b) { return a.name < b.name; });
  *out = std::move(m);
  return Status::ok();
}

}  // namespace hkb::detail
