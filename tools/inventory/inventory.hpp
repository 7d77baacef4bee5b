// The inventory checks behind `hkb check`, `hkb report` and `hkb info`, as functions that the
// unit tests drive without the command line. Each takes explicit paths and returns a result
// holding every finding; nothing here prints or exits.
#pragma once

#include "code_object_info.hpp"
#include "manifest.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hkb_tool {

// Module code objects in a bundle directory (<module>.hsaco or <module>.fatbin) by module name;
// sets *err when the directory is missing or cannot be listed.
std::map<std::string, std::string> module_files(const std::string& dir, std::string* err);

// ---- candle's ABI (manifests/candle-abi.tsv) -------------------------------------------------

struct CandleSymbol {
  std::string module;  // lower case, as hkb names modules ("affine")
  std::string name;
  std::string
      phase;  // candle's phase column ("1-core", "2-quantized"); empty if the table has none
  std::vector<std::string> ctypes;  // C parameter types as candle declares them
  std::vector<uint32_t> sizes;      // their byte sizes on 64-bit Linux
};

// Parses the TSV (a '#' comment line, a header with module, symbol and params columns, one row
// per symbol). Rejects unknown C types, missing columns and duplicate symbols.
Status parse_candle_abi(std::string_view text, std::string_view origin,
                        std::vector<CandleSymbol>* out);

// Whether a module in the manifest must hold every candle symbol of this phase: phase 1-core (or a
// table without phases) yes; a symbol of a later phase may be missing from a module hkb implements
// in parts (a note counts them), except under --require-all-modules. Present symbols must always
// match candle's parameter layout.
bool candle_phase_required(std::string_view phase);

// Byte size of one of candle's C parameter types ("const size_t *", "__nv_bfloat16", ...); 0 if
// unknown.
uint32_t candle_ctype_size(std::string_view ctype);

// ---- hkb check -------------------------------------------------------------------------------

struct CheckOptions {
  std::string bundle_dir;
  std::string manifest_path;
  std::string candle_abi_path;       // empty: skip the coverage of candle's ABI
  bool require_all_modules = false;  // a candle module absent from the manifest, or a symbol of a
                                     // later phase absent from a module, is an error
  bool require_layouts = false;      // a code object whose layouts cannot be read is an error
};

struct ModuleCoverage {
  std::string module;
  bool in_manifest = false;
  size_t want = 0;                      // candle symbols
  size_t have = 0;                      // of those, in the manifest with candle's parameter layout
  std::vector<std::string> missing;     // candle symbols the manifest lacks
  std::vector<std::string> mismatched;  // present with another layout or in another module
  std::vector<std::string> extras;      // hkb symbols of the module that candle lacks
};

struct CheckedImage {
  std::string module, file, target;
  size_t kernels = 0;
  bool layout_checked = false;
};

struct CheckResult {
  std::vector<std::string> errors;  // each names the file, target and kernel concerned
  std::vector<std::string> notes;   // parts skipped, files ignored
  std::vector<CheckedImage> images;
  std::vector<ModuleCoverage> coverage;
  size_t manifest_kernels = 0;
  bool ok() const { return errors.empty(); }
};

CheckResult run_check(const CheckOptions& options);
std::string check_text(const CheckResult& r);
nlohmann::json check_json(const CheckResult& r);

// Explicit-argument offsets a C compiler gives `params`: each aligned to its alignment.
std::vector<uint64_t> expected_offsets(const std::vector<hkb::detail::Param>& params);

// ---- hkb report ------------------------------------------------------------------------------

struct Occupancy {
  bool known = false;          // false for a target without a limits table (message in `note`)
  int max_waves = 0;           // waves per SIMD the hardware allows
  int vgpr_waves = 0;          // limit from VGPRs (+AGPRs)
  int sgpr_waves = 0;          // limit from SGPRs (gfx9 only; gfx10+ SGPRs do not limit)
  int lds_waves = 0;           // limit from LDS with workgroups of max_flat_workgroup_size
  int waves = 0;               // the minimum of the above: waves per SIMD
  bool workgroup_fits = true;  // one workgroup of max_flat_workgroup_size can be resident
  std::string note;
};

Occupancy amdgpu_occupancy(std::string_view target, const KernelMeta& k);

struct ReportOptions {
  std::string bundle_dir;
  std::string target;  // only images whose target or processor equals this; empty: all
};

struct ReportRow {
  std::string module, target;
  bool amdgpu = true;
  KernelMeta kernel;
  Occupancy occupancy;
  bool spills = false;   // registers spilled (VGPRs to scratch, SGPRs to VGPR lanes)
  bool scratch = false;  // private segment (scratch memory) per work-item
};

struct ReportResult {
  std::vector<ReportRow> rows;
  std::vector<std::string> errors;
  std::vector<std::string> notes;
  size_t spilling = 0;    // rows that spill
  size_t scratching = 0;  // rows that use scratch
};

ReportResult run_report(const ReportOptions& options);
std::string report_text(const ReportResult& r);
// One line per kernel image that spills or uses scratch: "<module> <target> <kernel>: <what>".
std::vector<std::string> report_offenders(const ReportResult& r);
nlohmann::json report_json(const ReportResult& r);

// ---- hkb info --------------------------------------------------------------------------------

struct InfoResult {
  std::string file;
  std::string container;  // "clang offload bundle", "AMDGPU ELF", "CUDA fatbin", "CUDA cubin"
  std::vector<std::string> bundle_entries;  // every entry ID of a bundle, host included
  std::vector<TargetImage> images;
  std::string error;
  bool ok() const { return error.empty(); }
};

InfoResult run_info(const std::string& path);
std::string info_text(const InfoResult& r);
nlohmann::json info_json(const InfoResult& r);

}  // namespace hkb_tool
