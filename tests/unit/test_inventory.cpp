// Unit tests of the inventory checks (tools/inventory): a small real code object
// (tests/data/inventory/tiny.hsaco, built from tiny.hip for gfx906 and gfx1030) checks clean
// against tiny-manifest.json; every bad input is derived from it here by truncating, patching or
// rebuilding bytes, and must give a clear error naming the file, never a crash.
#if defined(HKB_INVENTORY_TEST_DATA)

#include "inventory.hpp"
#include "commands.hpp"
#include "metadata_patch.hpp"
#include "msgpack.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace hkb_tool;
using test_util::Bytes;
using test_util::find_all;
using test_util::msgpack_key;

const std::string kData = HKB_INVENTORY_TEST_DATA;

Bytes read_bytes(const std::string& path) {
  Bytes b;
  EXPECT_TRUE(read_file_bytes(path, &b).is_ok()) << path;
  return b;
}

void write_bytes(const fs::path& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

void write_text(const fs::path& path, const std::string& s) {
  write_bytes(path, Bytes(s.begin(), s.end()));
}

bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v) {
    if (s.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

class Inventory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hkb_inventory_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    tiny_ = read_bytes(kData + "/tiny.hsaco");
    ASSERT_GT(tiny_.size(), 4096u);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CheckOptions options(const std::string& manifest = kData + "/tiny-manifest.json") const {
    CheckOptions o;
    o.bundle_dir = dir_.string();
    o.manifest_path = manifest;
    return o;
  }
  std::string bundle_path() const { return (dir_ / "tiny.hsaco").string(); }

  fs::path dir_;
  Bytes tiny_;
};

TEST_F(Inventory, RealCodeObjectChecksClean) {
  write_bytes(bundle_path(), tiny_);
  const CheckResult r = run_check(options());
  EXPECT_TRUE(r.ok()) << check_text(r);
  ASSERT_EQ(r.images.size(), 2u);
  for (const auto& img : r.images) {
    EXPECT_EQ(img.kernels, 2u);
    EXPECT_TRUE(img.layout_checked);
  }
  EXPECT_EQ(r.manifest_kernels, 2u);
}

TEST_F(Inventory, InfoReadsTargetsAndKernargLayouts) {
  write_bytes(bundle_path(), tiny_);
  const InfoResult r = run_info(bundle_path());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.container, "clang offload bundle");
  ASSERT_EQ(r.images.size(), 2u);
  for (const auto& img : r.images) {
    ASSERT_EQ(img.kernels.size(), 2u) << img.target;
    const KernelMeta& axpy = img.kernels[0];
    const KernelMeta& flags = img.kernels[1];
    EXPECT_EQ(axpy.name, "tiny_axpy");
    EXPECT_EQ(flags.name, "tiny_flags");
    // The C layout tiny.hip documents: padding before the pointer after a float, and after
    // the bool.
    const std::vector<uint64_t> axpy_off{0, 8, 16, 24}, axpy_size{8, 4, 8, 8};
    const std::vector<uint64_t> flags_off{0, 2, 4, 8, 16}, flags_size{1, 2, 4, 8, 8};
    ASSERT_EQ(axpy.args.size(), 4u);
    ASSERT_EQ(flags.args.size(), 5u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(axpy.args[i].offset, axpy_off[i]) << img.target << " arg " << i;
      EXPECT_EQ(axpy.args[i].size, axpy_size[i]) << img.target << " arg " << i;
    }
    for (size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(flags.args[i].offset, flags_off[i]) << img.target << " arg " << i;
      EXPECT_EQ(flags.args[i].size, flags_size[i]) << img.target << " arg " << i;
    }
    EXPECT_EQ(axpy.args[2].value_kind, "global_buffer");
    EXPECT_EQ(axpy.wavefront_size, img.target == "gfx1030" ? 32 : 64) << img.target;
    EXPECT_GT(axpy.vgpr_count, 0);
    EXPECT_EQ(axpy.vgpr_spill_count, 0);
  }
  EXPECT_NE(info_text(r).find("tiny_flags (5 args"), std::string::npos) << info_text(r);
}

TEST_F(Inventory, ExpectedOffsetsFollowCLayout) {
  hkb::detail::Manifest m;
  std::string json;
  {
    std::ifstream f(kData + "/tiny-manifest.json");
    json.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  ASSERT_TRUE(hkb::detail::parse_manifest(json, "tiny", &m).is_ok());
  EXPECT_EQ(expected_offsets(m.kernels[0].params), (std::vector<uint64_t>{0, 8, 16, 24}));
  EXPECT_EQ(expected_offsets(m.kernels[1].params), (std::vector<uint64_t>{0, 2, 4, 8, 16}));
}

TEST_F(Inventory, EveryTruncationOfTheBundleIsAnError) {
  for (size_t len = 0; len < tiny_.size(); ++len) {
    std::vector<TargetImage> images;
    const Status s = read_module_file(tiny_.data(), len, "cut.hsaco", &images);
    ASSERT_FALSE(s.is_ok()) << "length " << len;
    ASSERT_NE(s.message.find("cut.hsaco"), std::string::npos) << s.message;
  }
  write_bytes(bundle_path(), Bytes(tiny_.begin(), tiny_.begin() + tiny_.size() / 2));
  const CheckResult r = run_check(options());
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(any_contains(r.errors, bundle_path())) << joined(r.errors);
  EXPECT_TRUE(any_contains(r.errors, "truncated")) << joined(r.errors);
}

TEST_F(Inventory, EveryTruncationOfAnElfEntryIsAnError) {
  std::vector<hkb::detail::BundleEntry> entries;
  ASSERT_TRUE(hkb::detail::parse_offload_bundle(tiny_.data(), tiny_.size(), "t", &entries).is_ok());
  size_t checked = 0;
  for (const auto& e : entries) {
    if (!e.is_amdgpu()) continue;
    const uint8_t* elf = tiny_.data() + e.offset;
    std::vector<KernelMeta> k;
    ASSERT_TRUE(read_amdgpu_elf(elf, e.size, e.target, &k).is_ok());
    for (size_t len = 0; len < e.size; ++len) {
      ASSERT_FALSE(read_amdgpu_elf(elf, len, "cut", &k).is_ok()) << e.target << " length " << len;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 2u);
}

// Random corruption of real code objects (a few bytes overwritten, sometimes a truncation too):
// every reader returns, and a failure names the file. Fixed seeds; the same loop under
// AddressSanitizer and UBSan with 200,000 mutations per file found nothing.
TEST_F(Inventory, MutatedCodeObjectsFailCleanly) {
  for (const std::string name : {"tiny.hsaco", "tiny.fatbin"}) {
    const Bytes orig = read_bytes(kData + "/" + name);
    ASSERT_FALSE(orig.empty()) << name;
    std::mt19937_64 rng(0x6b62);
    size_t parsed = 0;
    for (int it = 0; it < 3000; ++it) {
      Bytes b = orig;
      const int mutations = 1 + static_cast<int>(rng() % 8);
      for (int m = 0; m < mutations; ++m) {
        const size_t pos = rng() % b.size();
        switch (rng() % 3) {
          case 0:
            b[pos] = static_cast<uint8_t>(rng());
            break;
          case 1:
            b[pos] ^= static_cast<uint8_t>(1u << (rng() % 8));
            break;
          default:
            for (size_t k = pos; k < b.size() && k < pos + 8; ++k) b[k] = 0xFF;
        }
      }
      if (rng() % 8 == 0) b.resize(rng() % b.size());
      std::vector<TargetImage> images;
      const Status s = read_module_file(b.data(), b.size(), "mutated.bin", &images);
      parsed += s.is_ok();
      if (!s.is_ok()) {
        ASSERT_NE(s.message.find("mutated.bin"), std::string::npos)
            << name << " iteration " << it << ": " << s.message;
      }
      hkb::detail::SelectedImage img;
      const Status sel = hkb::detail::select_amd_image(b.data(), b.size(), "gfx90a", "m", &img);
      if (!sel.is_ok()) ASSERT_FALSE(sel.message.empty()) << name << " iteration " << it;
      const Status nv = hkb::detail::check_nvidia_image(b.data(), b.size(), "m");
      if (!nv.is_ok()) ASSERT_FALSE(nv.message.empty()) << name << " iteration " << it;
    }
    // Most mutations land in code bytes that no reader looks at; some must still be caught.
    EXPECT_GT(parsed, 0u) << name;
    EXPECT_LT(parsed, 3000u) << name;
  }
}

// The same for the manifest: a corrupt manifest is an error naming the file, never a crash.
TEST_F(Inventory, MutatedManifestsFailCleanly) {
  const Bytes orig = read_bytes(kData + "/tiny-manifest.json");
  ASSERT_FALSE(orig.empty());
  std::mt19937_64 rng(0x6d66);
  size_t parsed = 0;
  for (int it = 0; it < 3000; ++it) {
    std::string json(orig.begin(), orig.end());
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) json[rng() % json.size()] = static_cast<char>(rng());
    if (rng() % 8 == 0) json.resize(rng() % json.size());
    hkb::detail::Manifest manifest;
    const Status s = hkb::detail::parse_manifest(json, "mutated.json", &manifest);
    parsed += s.is_ok();
    if (!s.is_ok()) {
      ASSERT_NE(s.message.find("mutated.json"), std::string::npos)
          << "iteration " << it << ": " << s.message;
    }
  }
  EXPECT_LT(parsed, 3000u);
}

TEST_F(Inventory, BundleWithoutAmdEntryIsAnError) {
  // A bundle with only the host entry: magic, count 1, {offset, size, id length, id}, payload.
  const std::string id = "host-x86_64-unknown-linux";
  Bytes b;
  const std::string magic = "__CLANG_OFFLOAD_BUNDLE__";
  b.insert(b.end(), magic.begin(), magic.end());
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  u64(1);
  const uint64_t payload_offset = magic.size() + 8 + 24 + id.size();
  u64(payload_offset), u64(4), u64(id.size());
  b.insert(b.end(), id.begin(), id.end());
  b.insert(b.end(), {0, 0, 0, 0});
  write_bytes(bundle_path(), b);
  const CheckResult r = run_check(options());
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(any_contains(r.errors, bundle_path() + ": the bundle holds no AMDGPU code object"))
      << joined(r.errors);
  EXPECT_FALSE(run_info(bundle_path()).ok());
}

TEST_F(Inventory, ElfWithoutMetadataNoteIsAnError) {
  // Note header: namesz 7, descsz, type 32 (NT_AMDGPU_METADATA), "AMDGPU\0".
  Bytes b = tiny_;
  const std::string owner("AMDGPU\0", 7);
  size_t patched = 0;
  for (size_t at : find_all(b, Bytes(owner.begin(), owner.end()))) {
    if (at < 12 || b[at - 12] != 7 || b[at - 4] != 32) continue;
    b[at - 4] = 33;
    ++patched;
  }
  ASSERT_EQ(patched, 2u);  // one per target
  write_bytes(bundle_path(), b);
  const CheckResult r = run_check(options());
  EXPECT_FALSE(r.ok());
  // Reading a module stops at its first unreadable entry; entries come in bundle ID order.
  EXPECT_TRUE(any_contains(r.errors, bundle_path() + " [gfx1030]: no NT_AMDGPU_METADATA note"))
      << joined(r.errors);
  EXPECT_EQ(r.errors.size(), 1u) << joined(r.errors);
}

TEST_F(Inventory, MetadataWithWrongArgumentSizeIsAnError) {
  // tiny_flags' bool is the only argument of size 1: ".size" followed by positive fixint 1.
  Bytes pattern = msgpack_key(".size");
  pattern.push_back(0x01);
  Bytes b = tiny_;
  const auto at = find_all(b, pattern);
  ASSERT_EQ(at.size(), 2u);
  b[at[0] + pattern.size() - 1] = 0x04;
  write_bytes(bundle_path(), b);
  const CheckResult r = run_check(options());
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_NE(r.errors[0].find("kernel tiny_flags argument 0 ('flag', bool): size 4 at offset 0"),
            std::string::npos)
      << r.errors[0];
  EXPECT_NE(r.errors[0].find(bundle_path()), std::string::npos) << r.errors[0];
}

TEST_F(Inventory, ManifestLayoutDifferentFromCodeObjectIsAnError) {
  write_bytes(bundle_path(), tiny_);
  write_text(dir_ / "m.json", R"({"module": "tiny", "kernels": [
    {"name": "tiny_axpy", "params": [["numel", "usize"], ["a", "f64"], ["x", "const f32*"], ["y", "f32*"]]},
    {"name": "tiny_flags", "params": [["flag", "bool"], ["h", "u16"], ["v", "i32"], ["in", "const u8*"]]}]})");
  const CheckResult r = run_check(options((dir_ / "m.json").string()));
  EXPECT_FALSE(r.ok());
  // Per target: a's size (4 in the code object, 8 in the manifest) and tiny_flags' count.
  EXPECT_TRUE(any_contains(r.errors,
                           "tiny_axpy argument 1 ('a', f64): size 4 at offset 8 in the "
                           "code object, the manifest wants size 8 at offset 8"))
      << joined(r.errors);
  EXPECT_TRUE(any_contains(r.errors, "tiny_flags takes 5 explicit arguments")) << joined(r.errors);
  EXPECT_EQ(r.errors.size(), 4u) << joined(r.errors);
}

TEST_F(Inventory, UnlistedAndMissingKernelsAreErrors) {
  write_bytes(bundle_path(), tiny_);
  write_text(dir_ / "m.json", R"({"module": "tiny", "kernels": [
    {"name": "tiny_axpy", "params": [["numel", "usize"], ["a", "f32"], ["x", "const f32*"], ["y", "f32*"]]},
    {"name": "tiny_gone", "params": []}]})");
  const CheckResult r = run_check(options((dir_ / "m.json").string()));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(
      any_contains(r.errors, "[gfx906]: kernel tiny_flags is not in the manifest (unlisted)"))
      << joined(r.errors);
  EXPECT_TRUE(any_contains(r.errors, "[gfx1030]: kernel tiny_gone of the manifest is missing"))
      << joined(r.errors);
  EXPECT_EQ(r.errors.size(), 4u) << joined(r.errors);
}

TEST_F(Inventory, EmptyManifestIsAnError) {
  write_bytes(bundle_path(), tiny_);
  const std::string m = (dir_ / "empty.json").string();
  write_text(m, R"({"module": "tiny", "kernels": []})");
  const CheckResult r = run_check(options(m));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(any_contains(r.errors, m + ": lists no kernels")) << joined(r.errors);
}

TEST_F(Inventory, ManifestWithDuplicateSymbolIsAnError) {
  write_bytes(bundle_path(), tiny_);
  const std::string m = (dir_ / "dup.json").string();
  write_text(m, R"({"module": "tiny", "kernels": [
    {"name": "tiny_axpy", "params": [["numel", "usize"]]},
    {"name": "tiny_axpy", "params": [["numel", "usize"]]}]})");
  const CheckResult r = run_check(options(m));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(any_contains(r.errors, "kernel 'tiny_axpy' listed twice")) << joined(r.errors);
}

TEST_F(Inventory, MissingManifestAndMissingModuleFileAreErrors) {
  CheckResult r = run_check(options((dir_ / "absent.json").string()));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(any_contains(r.errors, "absent.json")) << joined(r.errors);
  r = run_check(options());  // the bundle directory holds no tiny.hsaco
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(any_contains(r.errors, "module tiny: no tiny.hsaco or tiny.fatbin"))
      << joined(r.errors);
}

TEST_F(Inventory, ForeignFileIsAnError) {
  write_text(bundle_path(), "this is not a code object\n");
  const CheckResult r = run_check(options());
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(any_contains(r.errors, bundle_path() + ": not a code object")) << joined(r.errors);
  // An ELF of another machine (x86-64) is named as such.
  Bytes elf(64, 0);
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2, elf[5] = 1, elf[18] = 62;
  std::vector<KernelMeta> k;
  const Status s = read_amdgpu_elf(elf.data(), elf.size(), "x86.o", &k);
  EXPECT_NE(s.message.find("x86.o: ELF machine 62 is not AMDGPU"), std::string::npos) << s.message;
}

TEST_F(Inventory, CandleCoverageCountsHaveWantMissingMismatchedAndExtras) {
  write_bytes(bundle_path(), tiny_);
  const std::string tsv = (dir_ / "abi.tsv").string();
  write_text(tsv,
             "# candle test table\n"
             "phase\tmodule\tsymbol\tfamily\tdtypes\tparams\tlaunch_note\n"
             "1-core\tTINY\ttiny_axpy\tf\tT\tconst size_t numel; const float a; const float *x; "
             "float *y\tn\n"
             "1-core\tTINY\ttiny_flags\tf\tT\tbool flag; int h; int v; const uint8_t *in; uint8_t "
             "*out\tn\n"
             "1-core\tTINY\ttiny_gone\tf\tT\tconst size_t n\tn\n"
             "1-core\tOTHER\tother_op\tf\tT\tconst __nv_bfloat16 x\tn\n");
  CheckOptions o = options();
  o.candle_abi_path = tsv;
  CheckResult r = run_check(o);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.coverage.size(), 2u);
  const ModuleCoverage& other = r.coverage[0];
  const ModuleCoverage& tiny = r.coverage[1];
  EXPECT_EQ(other.module, "other");
  EXPECT_FALSE(other.in_manifest);
  EXPECT_EQ(tiny.module, "tiny");
  EXPECT_EQ(tiny.want, 3u);
  EXPECT_EQ(tiny.have, 1u);
  EXPECT_EQ(tiny.missing, std::vector<std::string>{"tiny_gone"});
  EXPECT_EQ(tiny.mismatched, std::vector<std::string>{"tiny_flags"});
  EXPECT_TRUE(tiny.extras.empty());
  EXPECT_TRUE(any_contains(r.errors,
                           "tiny_flags: parameter sizes (1,2,4,8,8) differ from "
                           "candle's (1,4,4,8,8)"))
      << joined(r.errors);
  EXPECT_TRUE(any_contains(r.errors, "candle symbol tiny_gone (tiny) is not in the manifest"));
  EXPECT_EQ(r.errors.size(), 2u) << joined(r.errors);  // a module outside the build is a note
  EXPECT_TRUE(any_contains(r.notes, "module other (1 candle symbols) is not in this manifest"));
  o.require_all_modules = true;
  r = run_check(o);
  EXPECT_EQ(r.errors.size(), 3u) << joined(r.errors);

  // With the table matching, tiny_axpy and tiny_flags are covered and nothing is extra.
  write_text(
      tsv,
      "phase\tmodule\tsymbol\tparams\n"
      "1-core\tTINY\ttiny_axpy\tconst size_t numel; const float a; const float *x; float *y\n");
  r = run_check(o);
  EXPECT_TRUE(r.ok()) << check_text(r);
  ASSERT_EQ(r.coverage.size(), 1u);
  EXPECT_EQ(r.coverage[0].have, 1u);
  EXPECT_EQ(r.coverage[0].extras, std::vector<std::string>{"tiny_flags"});
}

// A module hkb implements in parts: its symbols of a later phase may be missing (counted, and
// named in a note) while the present ones must match; --require-all-modules wants them all.
TEST_F(Inventory, LaterPhaseSymbolsMayBeMissingFromAModule) {
  write_bytes(bundle_path(), tiny_);
  const std::string tsv = (dir_ / "abi.tsv").string();
  write_text(tsv,
             "phase\tmodule\tsymbol\tparams\n"
             "2-quantized\tTINY\ttiny_axpy\tconst size_t numel; const float a; const void * "
             "__restrict__ x; float *y\n"
             "2-quantized\tTINY\ttiny_later\tconst void * __restrict__ vx; float * y\n"
             "2-quantized\tTINY\ttiny_later2\tconst int k\n");
  CheckOptions o = options();
  o.candle_abi_path = tsv;
  CheckResult r = run_check(o);
  EXPECT_TRUE(r.ok()) << check_text(r);
  ASSERT_EQ(r.coverage.size(), 1u);
  EXPECT_EQ(r.coverage[0].have, 1u);
  EXPECT_EQ(r.coverage[0].want, 3u);
  EXPECT_EQ(r.coverage[0].missing, (std::vector<std::string>{"tiny_later", "tiny_later2"}));
  EXPECT_TRUE(any_contains(r.notes, "tiny (phase 2-quantized): 2 candle symbols not yet in hkb"))
      << joined(r.notes);
  o.require_all_modules = true;
  r = run_check(o);
  EXPECT_EQ(r.errors.size(), 2u) << joined(r.errors);
  EXPECT_TRUE(any_contains(r.errors, "candle symbol tiny_later (tiny) is not in the manifest"));
  // A present symbol of a later phase with another layout is an error as in phase 1-core.
  o.require_all_modules = false;
  write_text(tsv,
             "phase\tmodule\tsymbol\tparams\n"
             "2-quantized\tTINY\ttiny_axpy\tconst size_t numel; const double a; const void * "
             "x; float *y\n");
  r = run_check(o);
  EXPECT_TRUE(any_contains(r.errors,
                           "tiny_axpy: parameter sizes (8,4,8,8) differ from candle's "
                           "(8,8,8,8)"))
      << joined(r.errors);
  EXPECT_TRUE(candle_phase_required("1-core"));
  EXPECT_TRUE(candle_phase_required(""));
  EXPECT_FALSE(candle_phase_required("2-quantized"));
}

// tiny.fatbin: the same two kernels compiled by nvcc for sm_90 (tests/data/inventory/tiny.cu).
TEST_F(Inventory, CubinParameterLayoutFromNvInfo) {
  const Bytes fatbin = read_bytes(kData + "/tiny.fatbin");
  write_bytes(dir_ / "tiny.fatbin", fatbin);
  CheckResult r = run_check(options());
  EXPECT_TRUE(r.ok()) << check_text(r);
  ASSERT_EQ(r.images.size(), 1u);
  EXPECT_EQ(r.images[0].target, "sm_90");
  EXPECT_EQ(r.images[0].kernels, 2u);
  EXPECT_TRUE(r.images[0].layout_checked);

  // EIATTR_KPARAM_INFO of tiny_flags' bool (SVAL, 12 bytes: index 0, ordinal 0, offset 0, then
  // flags with the size in bits 18..31): make it 4 bytes.
  const Bytes head{0x04, 0x17, 0x0c, 0x00, 0, 0, 0, 0, 0, 0, 0, 0};
  Bytes bad = fatbin;
  size_t patched = 0;
  for (size_t at : find_all(bad, head)) {
    uint32_t flags;
    std::memcpy(&flags, bad.data() + at + 12, 4);
    if (((flags >> 18) & 0x3fff) != 1) continue;
    flags = (flags & 0x3ffff) | (4u << 18);
    std::memcpy(bad.data() + at + 12, &flags, 4);
    ++patched;
  }
  ASSERT_EQ(patched, 1u);
  write_bytes(dir_ / "tiny.fatbin", bad);
  r = run_check(options());
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_NE(r.errors[0].find("[sm_90]: kernel tiny_flags argument 0 ('flag', bool): size 4"),
            std::string::npos)
      << r.errors[0];

  for (size_t len = 0; len < fatbin.size(); ++len) {
    std::vector<TargetImage> images;
    ASSERT_FALSE(read_module_file(fatbin.data(), len, "cut.fatbin", &images).is_ok()) << len;
  }

  // A compressed entry is skipped with a note: flag 0x2000 in the entry header at 16 + 40, or
  // 0x8000 (zstd, nvcc 12.8 and later), whose payload is no ELF.
  auto expect_skipped = [&](const Bytes& bytes, const char* what) {
    write_bytes(dir_ / "tiny.fatbin", bytes);
    r = run_check(options());
    EXPECT_TRUE(r.ok()) << what << ": " << check_text(r);
    ASSERT_EQ(r.images.size(), 1u) << what;
    EXPECT_FALSE(r.images[0].layout_checked) << what;
    EXPECT_TRUE(any_contains(r.notes, "compressed cubin")) << what << ": " << joined(r.notes);
  };
  Bytes compressed = fatbin;
  compressed[16 + 41] |= 0x20;
  expect_skipped(compressed, "flag 0x2000");
  Bytes zstd = fatbin;
  zstd[16 + 41] |= 0x80;
  zstd[16 + 64] = 0x28;  // the zstd frame magic in place of the ELF magic
  expect_skipped(zstd, "flag 0x8000");

  // With --require-layouts an unreadable layout (the zstd file above) fails the check.
  CheckOptions strict = options();
  strict.require_layouts = true;
  r = run_check(strict);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(any_contains(r.errors, "compressed cubin")) << check_text(r);
}

TEST_F(Inventory, ReportListsEveryKernelOnEveryTargetAndFlagsSpills) {
  write_bytes(bundle_path(), tiny_);
  ReportOptions o{dir_.string(), ""};
  ReportResult r = run_report(o);
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.spilling, 0u);
  for (const auto& row : r.rows) {
    EXPECT_TRUE(row.occupancy.known) << row.target;
    EXPECT_GT(row.occupancy.waves, 0) << row.target;
  }
  o.target = "gfx906";
  r = run_report(o);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].occupancy.max_waves, 10);
  o.target = "gfx942";
  r = run_report(o);
  EXPECT_TRUE(any_contains(r.errors, "has target gfx942")) << joined(r.errors);

  EXPECT_TRUE(report_offenders(r).empty());

  // ".vgpr_spill_count" 0 -> 3 for every kernel of every target.
  Bytes b = tiny_;
  ASSERT_EQ(test_util::patch_fixint(&b, ".vgpr_spill_count", 0, 3), 4u);
  write_bytes(bundle_path(), b);
  o.target.clear();
  r = run_report(o);
  EXPECT_EQ(r.spilling, 4u);
  EXPECT_EQ(r.scratching, 0u);
  EXPECT_NE(report_text(r).find("SPILLS"), std::string::npos);
  std::vector<std::string> bad = report_offenders(r);
  ASSERT_EQ(bad.size(), 4u);
  EXPECT_NE(bad[0].find(": 3 VGPR spills"), std::string::npos) << bad[0];

  // Scratch without a spill (a private array, a dynamic index) is reported too.
  b = tiny_;
  ASSERT_EQ(test_util::patch_fixint(&b, ".private_segment_fixed_size", 0, 16), 4u);
  write_bytes(bundle_path(), b);
  r = run_report(o);
  EXPECT_EQ(r.spilling, 0u);
  EXPECT_EQ(r.scratching, 4u);
  EXPECT_NE(report_text(r).find("SCRATCH"), std::string::npos);
  bad = report_offenders(r);
  ASSERT_EQ(bad.size(), 4u);
  EXPECT_NE(bad[0].find("16 bytes of scratch"), std::string::npos) << bad[0];
  EXPECT_EQ(bad[0].find("spills"), std::string::npos) << bad[0];
}

TEST_F(Inventory, CommandsExitNonZeroOnFailure) {
  write_bytes(bundle_path(), tiny_);
  auto run = [](const std::string& line) {
    CLI::App app;
    add_inventory_commands(app);
    app.parse(line, false);
  };
  const std::string m = kData + "/tiny-manifest.json";
  EXPECT_NO_THROW(run("check --no-candle --bundle " + dir_.string() + " --manifest " + m));
  EXPECT_NO_THROW(run("info " + bundle_path()));
  EXPECT_NO_THROW(run("report --fail-on-spill --bundle " + dir_.string()));
  EXPECT_THROW(run("info " + (dir_ / "absent.hsaco").string()), CLI::RuntimeError);
  write_text(dir_ / "empty.json", R"({"module": "tiny", "kernels": []})");
  EXPECT_THROW(run("check --no-candle --json --bundle " + dir_.string() + " --manifest " +
                   (dir_ / "empty.json").string()),
               CLI::RuntimeError);
}

}  // namespace

#endif  // HKB_INVENTORY_TEST_DATA
