#include "commands.hpp"

#include "inventory.hpp"
#include "tool_util.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace hkb_tool {

namespace {

namespace fs = std::filesystem;

// Where the subcommands look by default: next to an installed hkb (bin/../lib/hkb, found from
// the executable's own path, so any install prefix works), else the build tree it came from.
struct DefaultPaths {
  std::string bundle_dir = HKB_INVENTORY_BUNDLE_DIR;
  std::string manifest = HKB_INVENTORY_MANIFEST;
  std::string candle_abi = HKB_INVENTORY_CANDLE_ABI;
};

DefaultPaths default_paths() {
  DefaultPaths d;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return d;
  const fs::path bundle = exe.parent_path() / HKB_INVENTORY_INSTALLED_BUNDLE_REL;
  if (!fs::is_regular_file(bundle / "hkb-manifest.json", ec)) return d;
  d.bundle_dir = bundle.lexically_normal().string();
  d.manifest = (bundle / "hkb-manifest.json").lexically_normal().string();
  d.candle_abi = (exe.parent_path() / HKB_INVENTORY_INSTALLED_ABI_REL).lexically_normal().string();
  return d;
}

struct Settings {
  DefaultPaths paths = default_paths();
  CheckOptions check{paths.bundle_dir, paths.manifest, paths.candle_abi};
  bool no_candle = false;
  bool check_json = false;
  ReportOptions report{paths.bundle_dir, ""};
  bool report_json = false;
  bool fail_on_spill = false;
  std::string info_file;
  bool info_json = false;
};

void finish(bool ok) {
  std::fflush(stdout);
  if (!ok) throw CLI::RuntimeError(kExitFailed);
}

}  // namespace

void add_inventory_commands(CLI::App& app) {
  auto s = std::make_shared<Settings>();

  auto* check = app.add_subcommand(
      "check",
      "Check every code object against the manifest and the manifest against candle's ABI");
  check->add_option("--bundle", s->check.bundle_dir, "Directory of <module>.hsaco/.fatbin files")
      ->capture_default_str();
  check->add_option("--manifest", s->check.manifest_path, "Combined or module manifest (JSON)")
      ->capture_default_str();
  check->add_option("--candle-abi", s->check.candle_abi_path, "candle's ABI table (TSV)")
      ->capture_default_str();
  check->add_flag("--no-candle", s->no_candle, "Skip the coverage of candle's ABI");
  check->add_flag("--require-all-modules", s->check.require_all_modules,
                  "Fail when a module of candle's ABI, or a symbol of a later phase of a module "
                  "in the manifest, is absent");
  check->add_flag("--require-layouts", s->check.require_layouts,
                  "Fail when a code object's parameter layouts cannot be read (compressed cubins)");
  check->add_flag("--json", s->check_json, "Machine-readable output");
  check->callback([s] {
    CheckOptions o = s->check;
    if (s->no_candle) o.candle_abi_path.clear();
    const CheckResult r = run_check(o);
    if (s->check_json) {
      print_json(check_json(r));
    } else {
      std::cout << check_text(r);
    }
    finish(r.ok());
  });

  auto* report = app.add_subcommand(
      "report", "Registers, spills, LDS, scratch and occupancy of every kernel on every target");
  report->add_option("--bundle", s->report.bundle_dir, "Directory of <module>.hsaco/.fatbin files")
      ->capture_default_str();
  report->add_option("--target", s->report.target, "Only this target (gfx90a, gfx90a:xnack-, ...)");
  report->add_flag("--json", s->report_json, "Machine-readable output");
  report->add_flag("--fail-on-spill", s->fail_on_spill,
                   "Exit non-zero when any kernel spills registers or uses scratch memory, "
                   "naming each on stderr");
  report->callback([s] {
    const ReportResult r = run_report(s->report);
    if (s->report_json) {
      print_json(report_json(r));
    } else {
      std::cout << report_text(r);
    }
    const auto offenders = s->fail_on_spill ? report_offenders(r) : std::vector<std::string>{};
    std::cout.flush();
    for (const auto& line : offenders) {
      std::fprintf(stderr, "hkb: report: spills or scratch: %s\n", line.c_str());
    }
    finish(r.errors.empty() && offenders.empty());
  });

  auto* info =
      app.add_subcommand("info", "Targets, kernels and kernarg layouts of one code object");
  info->add_option("file", s->info_file, "A .hsaco bundle, AMDGPU ELF, fatbin or cubin")
      ->required();
  info->add_flag("--json", s->info_json, "Machine-readable output");
  info->callback([s] {
    const InfoResult r = run_info(s->info_file);
    if (s->info_json) {
      print_json(info_json(r));
    } else {
      std::cout << info_text(r);
    }
    finish(r.ok());
  });
}

}  // namespace hkb_tool
