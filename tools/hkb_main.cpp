// The hkb command line tool: `list` (the inventory), `doctor` (devices, their targets, the code
// object entry serving each, and a load of every module), and, where built, the inventory checks
// `check`, `report` and `info` (tools/inventory). Exit status: 0 success, 1 a check failed or the
// input is bad, 2 the command line is wrong.
#include "c_api.hpp"
#include "code_object.hpp"
#include "library.hpp"
#include "tool_util.hpp"

#include <CLI/CLI.hpp>
#include <hkb/hkb.h>

#include <cstdio>
#include <iostream>
#include <string>

#if defined(HKB_HAVE_INVENTORY)
#include "inventory/commands.hpp"
#endif

namespace {

using hkb::detail::Library;
using hkb::detail::Manifest;
using hkb::detail::Status;
using nlohmann::json;

constexpr const char* kExitCodes =
    "Exit status: 0 success; 1 a check failed, a file is bad or a name matches nothing; "
    "2 usage error (unknown command or option).";

int fail(const Status& s, bool as_json) {
  if (as_json) {
    hkb_tool::print_json({{"ok", false}, {"error", s.message}});
  } else {
    std::fprintf(stderr, "hkb: %s: %s\n", hkb_status_string(s.code), s.message.c_str());
  }
  return hkb_tool::kExitFailed;
}

struct ListOptions {
  std::string pattern;  // glob on kernel names; empty: every kernel
  std::string module;   // only this module; empty: every module
  bool names_only = false;
  bool as_json = false;
};

int run_list(const ListOptions& o) {
  Manifest m;
  Status s = hkb::detail::embedded_manifest(&m);
  if (!s) return fail(s, o.as_json);
  if (!o.module.empty() && m.module_index(o.module) < 0) {
    std::string known;
    for (const auto& name : m.modules) known += (known.empty() ? "" : ", ") + name;
    return fail(hkb::detail::error(HKB_ERROR_INVALID_ARGUMENT,
                                   "no module named '" + o.module + "' (modules: " + known + ")"),
                o.as_json);
  }
  json kernels = json::array();
  size_t shown = 0;
  for (const auto& k : m.kernels) {
    const std::string& module = m.modules[k.module];
    if (!o.module.empty() && module != o.module) continue;
    if (!o.pattern.empty() && !hkb_tool::glob_match(o.pattern, k.name)) continue;
    ++shown;
    if (o.as_json) {
      json params = json::array();
      for (const auto& p : k.params) {
        params.push_back({{"name", p.name}, {"type", p.type}, {"size", p.size}});
      }
      kernels.push_back({{"name", k.name}, {"module", module}, {"params", params}});
    } else if (o.names_only) {
      std::printf("%s\n", k.name.c_str());
    } else {
      std::printf("%-10s %s\n", module.c_str(), hkb::detail::signature_string(k).c_str());
    }
  }
  const bool ok = shown > 0 || o.pattern.empty();
  if (o.as_json) {
    hkb_tool::print_json({{"ok", ok}, {"platform", hkb_platform()}, {"kernels", kernels}});
  } else if (!o.names_only) {
    std::printf("%zu kernels in %zu modules (%s flavour)\n", shown,
                o.module.empty() ? m.modules.size() : size_t{1}, hkb_platform());
  }
  if (!ok) std::fprintf(stderr, "hkb: no kernel name matches '%s'\n", o.pattern.c_str());
  return ok ? hkb_tool::kExitOk : hkb_tool::kExitFailed;
}

}  // namespace

int run_doctor(bool as_json);  // tools/doctor.cpp

int main(int argc, char** argv) {
  CLI::App app{"hkb: HIP kernel bundle tool", "hkb"};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.set_version_flag("--version", hkb_tool::version_string());

  ListOptions list_options;
  auto* list = app.add_subcommand("list", "List every kernel and its signature");
  list->add_option("pattern", list_options.pattern,
                   "Only kernels whose name matches this glob (*, ?, [abc]); e.g. 'affine_*'");
  list->add_option("--module", list_options.module, "Only this module");
  list->add_flag("--names", list_options.names_only, "Names only, one per line");
  list->add_flag("--json", list_options.as_json, "Machine-readable output");

  bool doctor_json = false;
  auto* doctor = app.add_subcommand(
      "doctor",
      "Show devices, their target IDs, the bundle entry serving each, and load every module");
  doctor->add_flag("--json", doctor_json, "Machine-readable output");

#if defined(HKB_HAVE_INVENTORY)
  hkb_tool::add_inventory_commands(app);
#endif

  int rc = 0;
  list->callback([&] { rc = run_list(list_options); });
  doctor->callback([&] { rc = run_doctor(doctor_json); });
  const std::string unknown = hkb_tool::unknown_subcommand(app, argc, argv);
  if (!unknown.empty()) {
    std::fprintf(stderr, "hkb: %s\nRun with --help for more information.\n", unknown.c_str());
    return hkb_tool::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {  // a subcommand's failure
    return e.get_exit_code() == 0 ? hkb_tool::kExitOk : hkb_tool::kExitFailed;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return hkb_tool::kExitUsage;
  }
  return rc;
}
