#include "inventory.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace hkb_tool {

namespace fs = std::filesystem;
using hkb::detail::Manifest;
using hkb::detail::Param;

namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t p = s.find(sep, start);
    out.emplace_back(s.substr(start, p == std::string_view::npos ? p : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string layout_string(const std::vector<uint64_t>& offsets,
                          const std::vector<uint64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(sizes[i]) + "@" + std::to_string(offsets[i]);
  }
  return s + "]";
}

std::string text_file(const std::string& path, std::string* out) {
  std::vector<uint8_t> bytes;
  const Status s = read_file_bytes(path, &bytes);
  if (!s) return s.message;
  out->assign(bytes.begin(), bytes.end());
  return "";
}

}  // namespace

// Module code objects in a bundle directory: <module>.hsaco or <module>.fatbin, by module name.
std::map<std::string, std::string> module_files(const std::string& dir, std::string* err) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *err = "bundle directory " + dir + " does not exist (build first, or pass --bundle DIR)";
    return files;
  }
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto ext = e.path().extension().string();
    if (ext == ".hsaco" || ext == ".fatbin") files[e.path().stem().string()] = e.path().string();
  }
  if (ec) *err = "cannot list " + dir + ": " + ec.message();
  return files;
}

bool candle_phase_required(std::string_view phase) {
  return phase.empty() || phase == "1-core";
}

uint32_t candle_ctype_size(std::string_view ctype) {
  std::string t = trim(ctype);
  if (t.find('*') != std::string::npos) return 8;
  if (t.rfind("const ", 0) == 0) t = trim(t.substr(6));
  static const std::map<std::string, uint32_t> kSizes = {
      {"size_t", 8},  {"int64_t", 8},  {"uint64_t", 8},      {"double", 8},
      {"int", 4},     {"int32_t", 4},  {"uint32_t", 4},      {"float", 4},
      {"int16_t", 2}, {"uint16_t", 2}, {"__half", 2},        {"__nv_bfloat16", 2},
      {"uint8_t", 1}, {"int8_t", 1},   {"__nv_fp8_e4m3", 1}, {"bool", 1}};
  auto it = kSizes.find(t);
  return it == kSizes.end() ? 0 : it->second;
}

Status parse_candle_abi(std::string_view text, std::string_view origin,
                        std::vector<CandleSymbol>* out) {
  const std::string where(origin);
  auto fail = [&](const std::string& m) {
    return hkb::detail::error(HKB_ERROR_CORRUPT_MANIFEST, "candle ABI " + where + ": " + m);
  };
  out->clear();
  int module_col = -1, symbol_col = -1, params_col = -1, phase_col = -1;
  std::set<std::string> seen;
  size_t line_no = 0;
  for (const std::string& raw : split(text, '\n')) {
    ++line_no;
    const std::string line = raw.size() && raw.back() == '\r' ? raw.substr(0, raw.size() - 1) : raw;
    if (trim(line).empty() || line[0] == '#') continue;
    const auto cols = split(line, '\t');
    if (module_col < 0) {
      for (size_t i = 0; i < cols.size(); ++i) {
        if (cols[i] == "module") module_col = static_cast<int>(i);
        if (cols[i] == "symbol") symbol_col = static_cast<int>(i);
        if (cols[i] == "params") params_col = static_cast<int>(i);
        if (cols[i] == "phase") phase_col = static_cast<int>(i);
      }
      if (module_col < 0 || symbol_col < 0 || params_col < 0) {
        return fail("the header lacks a module, symbol or params column");
      }
      continue;
    }
    const size_t need =
        static_cast<size_t>(std::max({module_col, symbol_col, params_col, phase_col}));
    if (cols.size() <= need)
      return fail("line " + std::to_string(line_no) + " has too few columns");
    CandleSymbol s;
    s.module = lower(cols[module_col]);
    s.name = cols[symbol_col];
    if (phase_col >= 0) s.phase = cols[phase_col];
    if (s.name.empty()) return fail("line " + std::to_string(line_no) + " has no symbol");
    if (!seen.insert(s.name).second) return fail("symbol " + s.name + " listed twice");
    for (const std::string& p : split(cols[params_col], ';')) {
      std::string decl = trim(p);
      if (decl.empty()) continue;
      // Drop the parameter name: the identifier at the end of the declaration.
      size_t e = decl.size();
      while (e > 0 && (std::isalnum(static_cast<unsigned char>(decl[e - 1])) || decl[e - 1] == '_'))
        --e;
      const std::string ctype = trim(decl.substr(0, e));
      const uint32_t size = candle_ctype_size(ctype);
      if (ctype.empty() || size == 0) {
        return fail("symbol " + s.name + ": unknown C parameter type in '" + decl + "'");
      }
      s.ctypes.push_back(ctype);
      s.sizes.push_back(size);
    }
    out->push_back(std::move(s));
  }
  if (module_col < 0) return fail("empty (no header line)");
  return Status::ok();
}

std::vector<uint64_t> expected_offsets(const std::vector<Param>& params) {
  std::vector<uint64_t> offsets;
  uint64_t off = 0;
  for (const Param& p : params) {
    const uint64_t a = std::max<uint32_t>(p.align, 1);
    off = (off + a - 1) / a * a;
    offsets.push_back(off);
    off += p.size;
  }
  return offsets;
}

// ---- check -----------------------------------------------------------------------------------

namespace {

void check_image(const Manifest& m, uint32_t module, const std::string& file,
                 const TargetImage& img, bool require_layouts, CheckResult* r) {
  const std::string where = file + " [" + img.target + "]";
  CheckedImage ci{m.modules[module], file, img.target, img.kernels.size(), img.note.empty()};
  r->images.push_back(ci);
  if (!img.note.empty()) {
    if (require_layouts) {
      r->errors.push_back(where + ": " + img.note + " (--require-layouts)");
    } else {
      r->notes.push_back(where + ": " + img.note);
    }
    return;
  }
  if (!std::binary_search(img.globals.begin(), img.globals.end(),
                          hkb::detail::kMultiprocessorsSymbol)) {
    r->errors.push_back(
        where + ": no " + hkb::detail::kMultiprocessorsSymbol +
        " global, so the loader cannot give its kernels the device's "
        "multiprocessor count (kernels/common/platform.h defines it; stale build?)");
  }
  std::map<std::string, const KernelMeta*> by_name;
  for (const auto& k : img.kernels) by_name[k.name] = &k;
  for (const auto& k : m.kernels) {
    if (k.module != module) continue;
    auto it = by_name.find(k.name);
    if (it == by_name.end()) {
      r->errors.push_back(where + ": kernel " + k.name + " of the manifest is missing");
      continue;
    }
    const KernelMeta& got = *it->second;
    const std::vector<uint64_t> want_off = expected_offsets(k.params);
    std::vector<uint64_t> want_size, got_off, got_size;
    for (const auto& p : k.params) want_size.push_back(p.size);
    for (const auto& a : got.args) got_off.push_back(a.offset), got_size.push_back(a.size);
    if (got.args.size() != k.params.size()) {
      r->errors.push_back(where + ": kernel " + k.name + " takes " +
                          std::to_string(got.args.size()) + " explicit arguments " +
                          layout_string(got_off, got_size) + ", the manifest lists " +
                          std::to_string(k.params.size()) + " " +
                          layout_string(want_off, want_size) + " (size@offset)");
      continue;
    }
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (got_size[i] != want_size[i] || got_off[i] != want_off[i]) {
        r->errors.push_back(
            where + ": kernel " + k.name + " argument " + std::to_string(i) + " ('" +
            k.params[i].name + "', " + k.params[i].type + "): size " + std::to_string(got_size[i]) +
            " at offset " + std::to_string(got_off[i]) +
            " in the code object, the manifest wants size " + std::to_string(want_size[i]) +
            " at offset " + std::to_string(want_off[i]));
      }
    }
  }
  for (const auto& k : img.kernels) {
    const int64_t idx = m.find(k.name);
    if (idx < 0) {
      r->errors.push_back(where + ": kernel " + k.name + " is not in the manifest (unlisted)");
    } else if (m.kernels[idx].module != module) {
      r->errors.push_back(where + ": kernel " + k.name + " is listed under module " +
                          m.modules[m.kernels[idx].module] + ", not " + m.modules[module]);
    }
  }
}

void check_candle(const Manifest& m, const std::vector<CandleSymbol>& candle, bool require_all,
                  CheckResult* r) {
  std::map<std::string, ModuleCoverage> cov;
  std::map<std::string, size_t> pending;  // "module (phase ...)" -> later-phase symbols missing
  std::set<std::string> candle_names;
  for (const auto& s : candle) {
    candle_names.insert(s.name);
    ModuleCoverage& c = cov[s.module];
    c.module = s.module;
    c.in_manifest = m.module_index(s.module) >= 0;
    ++c.want;
    const int64_t idx = m.find(s.name);
    if (idx < 0) {
      c.missing.push_back(s.name);
      if (c.in_manifest && (require_all || candle_phase_required(s.phase))) {
        r->errors.push_back("candle symbol " + s.name + " (" + s.module +
                            ") is not in the manifest");
      } else if (c.in_manifest) {
        ++pending[s.module + " (phase " + s.phase + ")"];
      }
      continue;
    }
    const auto& k = m.kernels[idx];
    std::vector<uint32_t> sizes;
    for (const auto& p : k.params) sizes.push_back(p.size);
    std::string why;
    if (m.modules[k.module] != s.module) {
      why = "it is in module " + m.modules[k.module] + ", candle's is " + s.module;
    } else if (sizes != s.sizes) {
      std::string want, got;
      for (size_t i = 0; i < s.sizes.size(); ++i)
        want += (i ? "," : "") + std::to_string(s.sizes[i]);
      for (size_t i = 0; i < sizes.size(); ++i) got += (i ? "," : "") + std::to_string(sizes[i]);
      why = "parameter sizes (" + got + ") differ from candle's (" + want + ")";
    }
    if (!why.empty()) {
      c.mismatched.push_back(s.name);
      r->errors.push_back("candle symbol " + s.name + ": " + why);
    } else {
      ++c.have;
    }
  }
  for (const auto& k : m.kernels) {
    const std::string& module = m.modules[k.module];
    if (candle_names.count(k.name)) continue;
    ModuleCoverage& c = cov[module];
    c.module = module;
    c.in_manifest = true;
    c.extras.push_back(k.name);
  }
  for (const auto& [what, n] : pending) {
    r->notes.push_back(what + ": " + std::to_string(n) +
                       " candle symbols not yet in hkb (allowed for a phase after 1-core)");
  }
  for (auto& [name, c] : cov) {
    if (!c.in_manifest && c.want > 0) {
      const std::string msg = "module " + name + " (" + std::to_string(c.want) +
                              " candle symbols) is not in this manifest";
      (require_all ? r->errors : r->notes).push_back(msg);
    }
    r->coverage.push_back(std::move(c));
  }
}

}  // namespace

CheckResult run_check(const CheckOptions& o) {
  CheckResult r;
  std::string text;
  std::string err = text_file(o.manifest_path, &text);
  if (!err.empty()) {
    r.errors.push_back("manifest: " + err);
    return r;
  }
  Manifest m;
  Status s = hkb::detail::parse_manifest(text, o.manifest_path, &m);
  if (!s) {
    r.errors.push_back(s.message);
    return r;
  }
  r.manifest_kernels = m.kernels.size();
  if (!o.candle_abi_path.empty()) {
    std::string tsv;
    err = text_file(o.candle_abi_path, &tsv);
    std::vector<CandleSymbol> candle;
    if (!err.empty()) {
      r.errors.push_back("candle ABI: " + err);
    } else if (!(s = parse_candle_abi(tsv, o.candle_abi_path, &candle))) {
      r.errors.push_back(s.message);
    } else {
      check_candle(m, candle, o.require_all_modules, &r);
    }
  } else {
    r.notes.push_back("no candle ABI table given: coverage of candle's symbols not checked");
  }
  const auto files = module_files(o.bundle_dir, &err);
  if (!err.empty()) {
    r.errors.push_back(err);
    return r;
  }
  for (uint32_t i = 0; i < m.modules.size(); ++i) {
    const std::string& module = m.modules[i];
    auto f = files.find(module);
    if (f == files.end()) {
      r.errors.push_back("module " + module + ": no " + module + ".hsaco or " + module +
                         ".fatbin in " + o.bundle_dir);
      continue;
    }
    std::vector<uint8_t> bytes;
    std::vector<TargetImage> images;
    s = read_file_bytes(f->second, &bytes);
    if (s) s = read_module_file(bytes.data(), bytes.size(), f->second, &images);
    if (!s) {
      r.errors.push_back(s.message);
      continue;
    }
    for (const auto& img : images) check_image(m, i, f->second, img, o.require_layouts, &r);
  }
  for (const auto& [module, path] : files) {
    if (m.module_index(module) < 0) {
      r.notes.push_back(path + ": ignored (module " + module + " is not in the manifest)");
    }
  }
  return r;
}

std::string check_text(const CheckResult& r) {
  std::ostringstream o;
  for (const auto& i : r.images) {
    o << "checked " << i.file << " [" << i.target << "]: " << i.kernels << " kernels"
      << (i.layout_checked ? "" : " (layout not checked)") << "\n";
  }
  if (!r.coverage.empty()) {
    char line[160];
    std::snprintf(line, sizeof line, "%-10s %5s %5s %8s %10s %6s  %s\n", "module", "have", "want",
                  "missing", "mismatched", "extras", "");
    o << "\ncandle ABI coverage\n" << line;
    size_t have = 0, want = 0, extras = 0;
    for (const auto& c : r.coverage) {
      std::snprintf(line, sizeof line, "%-10s %5zu %5zu %8zu %10zu %6zu  %s\n", c.module.c_str(),
                    c.have, c.want, c.missing.size(), c.mismatched.size(), c.extras.size(),
                    c.in_manifest ? "" : "(not in this manifest)");
      o << line;
      have += c.have, want += c.want, extras += c.extras.size();
    }
    std::snprintf(line, sizeof line, "%-10s %5zu %5zu %28zu\n", "total", have, want, extras);
    o << line;
    for (const auto& c : r.coverage) {
      if (c.extras.empty()) continue;
      o << "extras in " << c.module << " (hkb symbols candle lacks):";
      for (const auto& e : c.extras) o << " " << e;
      o << "\n";
    }
  }
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  for (const auto& e : r.errors) o << "error: " << e << "\n";
  o << (r.ok() ? "check: OK" : "check: FAILED, " + std::to_string(r.errors.size()) + " problems")
    << " (" << r.manifest_kernels << " kernels in the manifest, " << r.images.size()
    << " code object images)\n";
  return o.str();
}

nlohmann::json check_json(const CheckResult& r) {
  nlohmann::json j;
  j["ok"] = r.ok();
  j["manifest_kernels"] = r.manifest_kernels;
  j["errors"] = r.errors;
  j["notes"] = r.notes;
  j["images"] = nlohmann::json::array();
  for (const auto& i : r.images) {
    j["images"].push_back({{"module", i.module},
                           {"file", i.file},
                           {"target", i.target},
                           {"kernels", i.kernels},
                           {"layout_checked", i.layout_checked}});
  }
  j["coverage"] = nlohmann::json::array();
  for (const auto& c : r.coverage) {
    j["coverage"].push_back({{"module", c.module},
                             {"in_manifest", c.in_manifest},
                             {"have", c.have},
                             {"want", c.want},
                             {"missing", c.missing},
                             {"mismatched", c.mismatched},
                             {"extras", c.extras}});
  }
  return j;
}

}  // namespace hkb_tool
