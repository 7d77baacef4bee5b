// `hkb doctor`: the library's version, where its code objects come from, whether each module's
// code object is one the loader accepts, the devices present and a load of every module on each.
#include "c_api.hpp"
#include "code_object.hpp"
#include "library.hpp"
#include "platforms.hpp"
#include "tool_util.hpp"

#include <hkb/hkb.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using hkb::detail::error;
using hkb::detail::Library;
using hkb::detail::Manifest;
using hkb::detail::Status;
using nlohmann::json;

constexpr uint16_t kEmAmdgpu = 224;

uint16_t elf_machine(const uint8_t* data, size_t size) {
  return size >= 20 ? static_cast<uint16_t>(data[18] | data[19] << 8) : 0;
}

// The checks the loader makes before handing a module's code object to the runtime, so that a
// file the loader would refuse is reported here too. `targets` receives what the image serves.
Status check_module_image(const hkb::detail::ModuleImage& image, const char* platform,
                          std::string* targets) {
  const uint8_t* data = image.data;
  const size_t size = image.size;
  if (std::strcmp(platform, "cpu") == 0) {
    std::vector<hkb::detail::CpuModuleMember> members;
    HKB_RETURN_IF_ERROR(hkb::detail::cpu_module_members(data, size, image.origin, &members));
    for (const auto& m : members) *targets += (targets->empty() ? "" : " ") + m.name;
    return Status::ok();
  }
  if (std::strcmp(platform, "nvidia") == 0) {
    HKB_RETURN_IF_ERROR(hkb::detail::check_nvidia_image(data, size, image.origin));
    *targets = hkb::detail::is_cuda_fatbin(data, size) ? "(CUDA fatbin)" : "(cubin)";
    return Status::ok();
  }
  if (hkb::detail::has_bundle_magic(data, size)) {
    std::vector<hkb::detail::BundleEntry> entries;
    HKB_RETURN_IF_ERROR(hkb::detail::parse_offload_bundle(data, size, image.origin, &entries));
    for (const auto& e : entries) {
      if (e.is_amdgpu() && (e.size == 0 || !hkb::detail::is_elf(data + e.offset, e.size))) {
        return error(HKB_ERROR_CORRUPT_BUNDLE,
                     image.origin + ": the entry for " + e.target + " is not an ELF code object");
      }
    }
    const auto list = hkb::detail::bundle_targets(entries);
    if (list.empty()) {
      return error(HKB_ERROR_CORRUPT_BUNDLE, image.origin + ": the bundle has no AMDGPU entry");
    }
    for (const auto& t : list) *targets += (targets->empty() ? "" : " ") + t;
    return Status::ok();
  }
  if (hkb::detail::is_elf(data, size) && size >= 64 && elf_machine(data, size) == kEmAmdgpu) {
    *targets = "(AMDGPU ELF)";
    return Status::ok();
  }
  return error(HKB_ERROR_CORRUPT_BUNDLE,
               image.origin + ": neither a clang offload bundle nor an AMDGPU ELF (" +
                   std::to_string(size) + " bytes)");
}

}  // namespace

int run_doctor(bool as_json) {
  json out = {{"version", hkb_tool::version_string()}, {"platform", hkb_platform()}};
  auto finish = [&](bool ok) {
    out["ok"] = ok;
    if (as_json) hkb_tool::print_json(out);
    if (!as_json) std::printf(ok ? "doctor: all modules load\n" : "doctor: problems found\n");
    return ok ? hkb_tool::kExitOk : hkb_tool::kExitFailed;
  };
  auto say = [&](const std::string& line) {
    if (!as_json) std::printf("%s\n", line.c_str());
  };
  auto fatal = [&](const Status& s) {
    out["error"] = s.message;
    if (!as_json)
      std::fprintf(stderr, "hkb: %s: %s\n", hkb_status_string(s.code), s.message.c_str());
    return finish(false);
  };
  say(hkb_tool::version_string());
  Library* lib = nullptr;
  Status s = hkb::detail::current_library(&lib);
  if (!s) return fatal(s);
  const Manifest& m = lib->manifest();
  out["manifest"] = {{"kernels", m.kernels.size()}, {"modules", m.modules.size()}};
  out["code_objects"] = lib->source().describe();
  say("manifest: " + std::to_string(m.kernels.size()) + " kernels in " +
      std::to_string(m.modules.size()) + " modules");
  say("code objects: " + lib->source().describe());
  bool ok = true;
  auto check_modules = [&](hkb::detail::BundleSource& source, const char* platform, json* list) {
    *list = json::array();
    for (const auto& module : m.modules) {
      hkb::detail::ModuleImage image;
      std::string targets;
      Status r = source.read(module, &image);
      if (r) r = check_module_image(image, platform, &targets);
      char line[512];
      if (!r) {
        ok = false;
        const char* what = r.code == HKB_ERROR_IO ? "MISSING" : "CORRUPT";
        std::snprintf(line, sizeof line, "  %-10s %s: %s", module.c_str(), what, r.message.c_str());
        list->push_back({{"module", module}, {"ok", false}, {"error", r.message}});
      } else {
        std::snprintf(line, sizeof line, "  %-10s %8zu bytes, targets: %s", module.c_str(),
                      image.size, targets.c_str());
        list->push_back(
            {{"module", module}, {"ok", true}, {"bytes", image.size}, {"targets", targets}});
      }
      say(line);
    }
  };
  check_modules(lib->source(), hkb_platform(), &out["modules"]);
  // A GPU flavour's CPU modules (HKB_CPU_MODULES, HKB_CPU_BUNDLE_DIR): its CPU devices load these.
  if (hkb::detail::BundleSource* cpu = lib->cpu_source()) {
    out["cpu_code_objects"] = cpu->describe();
    say("CPU modules: " + cpu->describe());
    check_modules(*cpu, "cpu", &out["cpu_modules"]);
  }
  int count = 0;
  s = lib->device_count(&count);
  if (!s) return fatal(s);
  out["devices"] = json::array();
  if (count == 0) {
    say(std::string("devices: none (") + lib->runtime().name() +
        " runtime reports no GPU); nothing to load");
    return finish(ok);
  }
  say("devices: " + std::to_string(count));
  for (int d = 0; d < count; ++d) {
    json dev = {{"ordinal", d}, {"modules", json::array()}};
    hkb_context_s* ctx = nullptr;
    s = lib->context(d, &ctx);
    if (!s) {
      say("  device " + std::to_string(d) + ": " + s.message);
      dev["error"] = s.message;
      out["devices"].push_back(dev);
      ok = false;
      continue;
    }
    dev["name"] = ctx->device_name;
    dev["target"] = ctx->target;
    say("  device " + std::to_string(d) + ": " + ctx->device_name + ", target " + ctx->target);
    for (uint32_t i = 0; i < m.modules.size(); ++i) {
      void* handle = nullptr;
      s = lib->ensure_module(ctx, i, &handle);
      if (!s) {
        say("    " + m.modules[i] + " FAILED: " + s.message);
        dev["modules"].push_back(
            {{"module", m.modules[i]}, {"loaded", false}, {"error", s.message}});
        ok = false;
      }
    }
    for (const auto& lm : lib->loaded_modules(ctx)) {
      say("    " + lm.name + " loaded, entry " + lm.target);
      dev["modules"].push_back({{"module", lm.name}, {"loaded", true}, {"entry", lm.target}});
    }
    out["devices"].push_back(dev);
  }
  return finish(ok);
}
