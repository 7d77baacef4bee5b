// `hkb report` (resources and occupancy per kernel and target) and `hkb info` (one code
// object's contents): the parts of the inventory that read code objects without a manifest.
#include "inventory.hpp"

#include <algorithm>
#include <map>

namespace hkb_tool {

namespace {

std::string str_or_dash(int64_t v) {
  return v < 0 ? "-" : std::to_string(v);
}

}  // namespace

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
