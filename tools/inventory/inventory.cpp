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

std::string str_or_dash(int64_t v) {
  return v < 0 ? "-" : std::to_string(v);
}

}  // namespace

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

// ---- report ----------------------------------------------------------------------------------

// Occupancy in waves per SIMD, after LLVM's AMDGPU subtarget model (AMDGPUBaseInfo.cpp:
// getMaxWavesPerEU, getVGPRAllocGranule, getTotalNumVGPRs, getEUsPerCU, and
// GCNSubtarget::getOccupancyWithNumSGPRs / getOccupancyWithLocalMemSize):
//   vgpr_waves = min(max_waves, floor(total_vgprs / align_up(max(1, .vgpr_count), granule)))
//     gfx906/gfx908      : total 256, granule 4, max 10 waves. On gfx908 .vgpr_count is already
//                          max(ArchVGPRs, AGPRs): the two files are separate, 256 each.
//     gfx90a/gfx940-942  : total 512, granule 8, max 8. .vgpr_count is the unified count
//                          align_up(ArchVGPRs, 4) + AGPRs.
//     gfx1010-gfx1013    : wave32 1024 / granule 8, wave64 512 / granule 4, max 20.
//     gfx1030-gfx1036    : wave32 1024 / granule 16, wave64 512 / granule 8, max 16.
//     gfx1100/1101/1151  : wave32 1536 / granule 24, wave64 768 / granule 12, max 16.
//     gfx1102/1103/1150  : wave32 1024 / granule 16, wave64 512 / granule 8, max 16.
//   sgpr_waves (gfx9 only; gfx10+ gives every wave its SGPRs): <= 80 SGPRs 10, <= 88 9,
//     <= 100 8, else 7, capped at max_waves.
//   lds_waves = min(max_waves, ceil(floor(65536 / lds) * ceil(max_wg / wave_size) / 4)):
//     whole workgroups of the kernel's max flat workgroup size fitting in 64 KiB of LDS per
//     CU (gfx9) or WGP (gfx10+, WGP mode), their waves spread over the 4 SIMDs. Only static LDS
//     (.group_segment_fixed_size) is known here; dynamic shared memory lowers it further.
//   waves = min(vgpr_waves, sgpr_waves, lds_waves).
Occupancy amdgpu_occupancy(std::string_view target, const KernelMeta& k) {
  Occupancy o;
  const std::string proc = hkb::detail::target_processor(target);
  const bool wave32 = k.wavefront_size == 32;
  int total = 0, granule = 0;
  bool gfx9 = false;
  if (proc == "gfx906" || proc == "gfx908" || proc == "gfx900" || proc == "gfx902" ||
      proc == "gfx904" || proc == "gfx909" || proc == "gfx90c") {
    total = 256, granule = 4, o.max_waves = 10, gfx9 = true;
  } else if (proc == "gfx90a" || proc == "gfx940" || proc == "gfx941" || proc == "gfx942") {
    total = 512, granule = 8, o.max_waves = 8, gfx9 = true;
  } else if (proc == "gfx1010" || proc == "gfx1011" || proc == "gfx1012" || proc == "gfx1013") {
    total = wave32 ? 1024 : 512, granule = wave32 ? 8 : 4, o.max_waves = 20;
  } else if (proc.rfind("gfx103", 0) == 0 || proc == "gfx1102" || proc == "gfx1103" ||
             proc == "gfx1150") {
    total = wave32 ? 1024 : 512, granule = wave32 ? 16 : 8, o.max_waves = 16;
  } else if (proc == "gfx1100" || proc == "gfx1101" || proc == "gfx1151") {
    total = wave32 ? 1536 : 768, granule = wave32 ? 24 : 12, o.max_waves = 16;
  } else {
    o.note = "no register file table for " + proc;
    return o;
  }
  if (k.vgpr_count < 0 || k.wavefront_size <= 0) {
    o.note = "the metadata lacks .vgpr_count or .wavefront_size";
    return o;
  }
  o.known = true;
  const int64_t v = std::max<int64_t>(1, k.vgpr_count);
  o.vgpr_waves = static_cast<int>(
      std::min<int64_t>(o.max_waves, total / ((v + granule - 1) / granule * granule)));
  o.sgpr_waves = o.max_waves;
  if (gfx9 && k.sgpr_count >= 0) {
    const int64_t sg = k.sgpr_count;
    o.sgpr_waves = std::min(o.max_waves, sg <= 80 ? 10 : sg <= 88 ? 9 : sg <= 100 ? 8 : 7);
  }
  const int64_t wg = k.max_flat_workgroup_size > 0 ? k.max_flat_workgroup_size : 1024;
  const int64_t waves_per_wg = (wg + k.wavefront_size - 1) / k.wavefront_size;
  constexpr int64_t kLdsBytes = 65536, kSimds = 4;
  o.lds_waves = o.max_waves;
  if (k.group_segment_fixed_size > 0) {
    const int64_t wgs = kLdsBytes / k.group_segment_fixed_size;
    o.lds_waves = static_cast<int>(
        std::min<int64_t>(o.max_waves, (wgs * waves_per_wg + kSimds - 1) / kSimds));
  }
  o.waves = std::min({o.vgpr_waves, o.sgpr_waves, o.lds_waves});
  o.workgroup_fits = o.waves >= (waves_per_wg + kSimds - 1) / kSimds;
  if (!o.workgroup_fits) {
    o.note = "a workgroup of " + std::to_string(wg) + " work-items needs " +
             std::to_string((waves_per_wg + kSimds - 1) / kSimds) + " waves per SIMD";
  }
  return o;
}

ReportResult run_report(const ReportOptions& opt) {
  ReportResult r;
  std::string err;
  const auto files = module_files(opt.bundle_dir, &err);
  if (!err.empty()) {
    r.errors.push_back(err);
    return r;
  }
  if (files.empty()) r.errors.push_back("no .hsaco or .fatbin files in " + opt.bundle_dir);
  bool target_seen = false;
  for (const auto& [module, path] : files) {
    std::vector<uint8_t> bytes;
    std::vector<TargetImage> images;
    Status s = read_file_bytes(path, &bytes);
    if (s) s = read_module_file(bytes.data(), bytes.size(), path, &images);
    if (!s) {
      r.errors.push_back(s.message);
      continue;
    }
    // --target may also be a device's full target ID (gfx90a:sramecc+:xnack-): then the entry
    // the loader would pick for that device is reported.
    hkb::detail::SelectedImage selected;
    const bool served =
        !opt.target.empty() && !images.empty() && images[0].kind == ImageKind::kAmdgpu &&
        hkb::detail::has_bundle_magic(bytes.data(), bytes.size()) &&
        hkb::detail::select_amd_image(bytes.data(), bytes.size(), opt.target, path, &selected);
    const std::string served_target = selected.target;
    for (const auto& img : images) {
      if (!opt.target.empty() && img.target != opt.target &&
          hkb::detail::target_processor(img.target) != opt.target &&
          !(served && img.target == served_target)) {
        continue;
      }
      target_seen = true;
      if (!img.note.empty()) r.notes.push_back(path + " [" + img.target + "]: " + img.note);
      for (const auto& k : img.kernels) {
        ReportRow row;
        row.module = module, row.target = img.target, row.kernel = k;
        row.amdgpu = img.kind == ImageKind::kAmdgpu;
        if (row.amdgpu) row.occupancy = amdgpu_occupancy(img.target, k);
        row.spills = k.vgpr_spill_count > 0 || k.sgpr_spill_count > 0;
        row.scratch = k.private_segment_fixed_size > 0;
        r.spilling += row.spills;
        r.scratching += row.scratch;
        r.rows.push_back(std::move(row));
      }
    }
  }
  if (!opt.target.empty() && !target_seen && r.errors.empty()) {
    r.errors.push_back("no code object in " + opt.bundle_dir + " has target " + opt.target);
  }
  return r;
}

std::string report_text(const ReportResult& r) {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%-10s %-16s %-36s %5s %5s %5s %6s %6s %6s %7s %4s %5s %6s %s\n",
                "module", "target", "kernel", "vgpr", "sgpr", "agpr", "vspill", "sspill", "lds",
                "scratch", "wave", "maxwg", "waves", "limits (vgpr/sgpr/lds of max)");
  o << line;
  for (const auto& row : r.rows) {
    const KernelMeta& k = row.kernel;
    std::string limits = "-", waves = "-";
    if (row.occupancy.known) {
      waves = std::to_string(row.occupancy.waves);
      limits = std::to_string(row.occupancy.vgpr_waves) + "/" +
               std::to_string(row.occupancy.sgpr_waves) + "/" +
               std::to_string(row.occupancy.lds_waves) + " of " +
               std::to_string(row.occupancy.max_waves);
    }
    if (!row.occupancy.note.empty()) limits += " (" + row.occupancy.note + ")";
    if (row.spills) limits += " SPILLS";
    if (row.scratch) limits += " SCRATCH";
    std::snprintf(
        line, sizeof line, "%-10s %-16s %-36s %5s %5s %5s %6s %6s %6s %7s %4s %5s %6s %s\n",
        row.module.c_str(), row.target.c_str(), k.name.c_str(), str_or_dash(k.vgpr_count).c_str(),
        str_or_dash(k.sgpr_count).c_str(), str_or_dash(k.agpr_count).c_str(),
        str_or_dash(k.vgpr_spill_count).c_str(), str_or_dash(k.sgpr_spill_count).c_str(),
        str_or_dash(k.group_segment_fixed_size).c_str(),
        str_or_dash(k.private_segment_fixed_size).c_str(), str_or_dash(k.wavefront_size).c_str(),
        str_or_dash(k.max_flat_workgroup_size).c_str(), waves.c_str(), limits.c_str());
    o << line;
  }
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  for (const auto& e : r.errors) o << "error: " << e << "\n";
  o << r.rows.size() << " kernel images, " << r.spilling << " with register spills, "
    << r.scratching << " with scratch\n";
  return o.str();
}

std::vector<std::string> report_offenders(const ReportResult& r) {
  std::vector<std::string> lines;
  for (const auto& row : r.rows) {
    if (!row.spills && !row.scratch) continue;
    const KernelMeta& k = row.kernel;
    std::string what;
    auto add = [&what](int64_t n, const char* unit) {
      if (n > 0) what += (what.empty() ? "" : ", ") + std::to_string(n) + " " + unit;
    };
    add(k.vgpr_spill_count, "VGPR spills");
    add(k.sgpr_spill_count, "SGPR spills");
    add(k.private_segment_fixed_size, "bytes of scratch per work-item");
    lines.push_back(row.module + " " + row.target + " " + k.name + ": " + what);
  }
  return lines;
}

nlohmann::json report_json(const ReportResult& r) {
  nlohmann::json j;
  j["errors"] = r.errors;
  j["notes"] = r.notes;
  j["spilling"] = r.spilling;
  j["scratching"] = r.scratching;
  j["kernels"] = nlohmann::json::array();
  for (const auto& row : r.rows) {
    const KernelMeta& k = row.kernel;
    nlohmann::json e = {{"module", row.module},
                        {"target", row.target},
                        {"kernel", k.name},
                        {"vgpr_count", k.vgpr_count},
                        {"sgpr_count", k.sgpr_count},
                        {"agpr_count", k.agpr_count},
                        {"vgpr_spill_count", k.vgpr_spill_count},
                        {"sgpr_spill_count", k.sgpr_spill_count},
                        {"lds_bytes", k.group_segment_fixed_size},
                        {"scratch_bytes", k.private_segment_fixed_size},
                        {"wavefront_size", k.wavefront_size},
                        {"max_flat_workgroup_size", k.max_flat_workgroup_size},
                        {"spills", row.spills},
                        {"scratch", row.scratch}};
    if (row.occupancy.known) {
      e["occupancy"] = {{"waves_per_simd", row.occupancy.waves},
                        {"max_waves", row.occupancy.max_waves},
                        {"vgpr_limit", row.occupancy.vgpr_waves},
                        {"sgpr_limit", row.occupancy.sgpr_waves},
                        {"lds_limit", row.occupancy.lds_waves},
                        {"workgroup_fits", row.occupancy.workgroup_fits}};
    }
    if (!row.occupancy.note.empty()) e["occupancy_note"] = row.occupancy.note;
    j["kernels"].push_back(std::move(e));
  }
  return j;
}

// ---- info ------------------------------------------------------------------------------------

InfoResult run_info(const std::string& path) {
  InfoResult r;
  r.file = path;
  std::vector<uint8_t> bytes;
  Status s = read_file_bytes(path, &bytes);
  if (!s) {
    r.error = s.message;
    return r;
  }
  if (hkb::detail::has_bundle_magic(bytes.data(), bytes.size())) {
    r.container = "clang offload bundle";
    std::vector<hkb::detail::BundleEntry> entries;
    if (hkb::detail::parse_offload_bundle(bytes.data(), bytes.size(), path, &entries)) {
      for (const auto& e : entries) r.bundle_entries.push_back(e.id);
    }
  } else if (hkb::detail::is_cuda_fatbin(bytes.data(), bytes.size())) {
    r.container = "CUDA fatbin";
  } else if (hkb::detail::is_elf(bytes.data(), bytes.size())) {
    r.container =
        bytes.size() >= 20 && bytes[18] == 190 && bytes[19] == 0 ? "CUDA cubin" : "AMDGPU ELF";
  }
  s = read_module_file(bytes.data(), bytes.size(), path, &r.images);
  if (!s) r.error = s.message;
  return r;
}

std::string info_text(const InfoResult& r) {
  std::ostringstream o;
  o << r.file << ": " << (r.container.empty() ? "unknown format" : r.container) << "\n";
  for (const auto& id : r.bundle_entries) o << "  entry " << id << "\n";
  for (const auto& img : r.images) {
    o << "target " << img.target << ": " << img.kernels.size() << " kernels\n";
    if (!img.note.empty()) o << "  note: " << img.note << "\n";
    for (const auto& k : img.kernels) {
      o << "  " << k.name << " (" << k.args.size() << " args";
      if (k.kernarg_segment_size >= 0)
        o << ", kernarg segment " << k.kernarg_segment_size << " bytes";
      o << ")\n";
      for (size_t i = 0; i < k.args.size(); ++i) {
        const KernelArg& a = k.args[i];
        o << "    [" << i << "] offset " << a.offset << " size " << a.size << " " << a.value_kind
          << (a.name.empty() ? "" : " " + a.name) << "\n";
      }
    }
  }
  if (!r.ok()) o << "error: " << r.error << "\n";
  return o.str();
}

nlohmann::json info_json(const InfoResult& r) {
  nlohmann::json j;
  j["file"] = r.file;
  j["container"] = r.container;
  j["entries"] = r.bundle_entries;
  if (!r.ok()) j["error"] = r.error;
  j["targets"] = nlohmann::json::array();
  for (const auto& img : r.images) {
    nlohmann::json t = {{"target", img.target}, {"kernels", nlohmann::json::array()}};
    if (!img.note.empty()) t["note"] = img.note;
    for (const auto& k : img.kernels) {
      nlohmann::json args = nlohmann::json::array();
      for (const auto& a : k.args) {
        args.push_back({{"offset", a.offset},
                        {"size", a.size},
                        {"value_kind", a.value_kind},
                        {"name", a.name}});
      }
      t["kernels"].push_back(
          {{"name", k.name}, {"kernarg_segment_size", k.kernarg_segment_size}, {"args", args}});
    }
    j["targets"].push_back(std::move(t));
  }
  return j;
}

}  // namespace hkb_tool
