// The hkb command line tool: `list` (the inventory), `doctor` (devices, their targets, the code
// object entry serving each, and a load of every module), and, where built, the inventory checks
// `check`, `report` and `info` (tools/inventory).
#include "c_api.hpp"
#include "code_object.hpp"
#include "library.hpp"

#include <CLI/CLI.hpp>
#include <hkb/hkb.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#if defined(HKB_HAVE_INVENTORY)
#include "inventory/commands.hpp"
#endif

namespace {

using hkb::detail::Library;
using hkb::detail::Manifest;
using hkb::detail::Status;

int fail(const Status& s) {
  std::fprintf(stderr, "hkb: %s: %s\n", hkb_status_string(s.code), s.message.c_str());
  return 1;
}

int run_list(const std::string& module_filter, bool names_only) {
  Manifest m;
  Status s = hkb::detail::embedded_manifest(&m);
  if (!s) return fail(s);
  size_t shown = 0;
  for (const auto& k : m.kernels) {
    const std::string& module = m.modules[k.module];
    if (!module_filter.empty() && module != module_filter) continue;
    if (names_only) {
      std::printf("%s\n", k.name.c_str());
    } else {
      std::printf("%-10s %s\n", module.c_str(), hkb::detail::signature_string(k).c_str());
    }
    ++shown;
  }
  if (!names_only) {
    std::printf("%zu kernels in %zu modules (%s flavour)\n", shown,
                module_filter.empty() ? m.modules.size() : size_t{1}, hkb_platform());
  }
  return 0;
}

int run_doctor() {
  int major, minor, patch, abi;
  hkb_version(&major, &minor, &patch, &abi);
  std::printf("hkb %d.%d.%d (ABI %d), %s flavour\n", major, minor, patch, abi, hkb_platform());
  Library* lib = nullptr;
  Status s = hkb::detail::current_library(&lib);
  if (!s) return fail(s);
  const Manifest& m = lib->manifest();
  std::printf("manifest: %zu kernels in %zu modules\n", m.kernels.size(), m.modules.size());
  std::printf("code objects: %s\n", lib->source().describe().c_str());
  bool ok = true;
  for (const auto& module : m.modules) {
    hkb::detail::ModuleImage image;
    Status r = lib->source().read(module, &image);
    if (!r) {
      std::printf("  %-10s MISSING: %s\n", module.c_str(), r.message.c_str());
      ok = false;
      continue;
    }
    std::string targets;
    if (hkb::detail::has_bundle_magic(image.data, image.size)) {
      std::vector<hkb::detail::BundleEntry> entries;
      r = hkb::detail::parse_offload_bundle(image.data, image.size, image.origin, &entries);
      if (!r) {
        std::printf("  %-10s CORRUPT: %s\n", module.c_str(), r.message.c_str());
        ok = false;
        continue;
      }
      for (const auto& t : hkb::detail::bundle_targets(entries)) targets += " " + t;
    } else {
      targets = hkb::detail::is_cuda_fatbin(image.data, image.size) ? " (CUDA fatbin)" : " (ELF)";
    }
    std::printf("  %-10s %8zu bytes, targets:%s\n", module.c_str(), image.size, targets.c_str());
  }
  int count = 0;
  s = lib->device_count(&count);
  if (!s) return fail(s);
  if (count == 0) {
    std::printf("devices: none (%s runtime reports no GPU); nothing to load\n",
                lib->runtime().name());
    return ok ? 0 : 1;
  }
  std::printf("devices: %d\n", count);
  for (int d = 0; d < count; ++d) {
    hkb_context_s* ctx = nullptr;
    s = lib->context(d, &ctx);
    if (!s) {
      std::printf("  device %d: %s\n", d, s.message.c_str());
      ok = false;
      continue;
    }
    std::printf("  device %d: %s, target %s\n", d, ctx->device_name.c_str(), ctx->target.c_str());
    for (uint32_t i = 0; i < m.modules.size(); ++i) {
      void* handle = nullptr;
      s = lib->ensure_module(ctx, i, &handle);
      if (!s) {
        std::printf("    %-10s FAILED: %s\n", m.modules[i].c_str(), s.message.c_str());
        ok = false;
      }
    }
    for (const auto& lm : lib->loaded_modules(ctx)) {
      std::printf("    %-10s loaded, entry %s\n", lm.name.c_str(), lm.target.c_str());
    }
  }
  std::printf(ok ? "doctor: all modules load\n" : "doctor: problems found\n");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hkb: HIP kernel bundle tool"};
  app.require_subcommand(1);

  std::string module_filter;
  bool names_only = false;
  auto* list = app.add_subcommand("list", "List every kernel and its signature");
  list->add_option("--module", module_filter, "Only this module");
  list->add_flag("--names", names_only, "Names only, one per line");

  auto* doctor = app.add_subcommand(
      "doctor",
      "Show devices, their target IDs, the bundle entry serving each, and load every module");

#if defined(HKB_HAVE_INVENTORY)
  hkb_tool::add_inventory_commands(app);
#endif

  int rc = 0;
  list->callback([&] { rc = run_list(module_filter, names_only); });
  doctor->callback([&] { rc = run_doctor(); });
  CLI11_PARSE(app, argc, argv);
  return rc;
}
