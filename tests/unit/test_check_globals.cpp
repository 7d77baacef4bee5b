// `hkb check` requires the hkb_multiprocessors global in every code object image (AMDGPU and
// cubin): the checked-in tiny code objects define it, and a copy whose symbol is renamed fails
// with a message naming the file, the target and the global.
#if defined(HKB_INVENTORY_TEST_DATA)
#include "code_object.hpp"
#include "inventory.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace {

using hkb_tool::CheckOptions;
using hkb_tool::CheckResult;

void expect_required(const std::string& file, size_t images) {
  const auto dir = test_util::fresh_test_dir("hkb_check_globals_");
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(
      hkb_tool::read_file_bytes(std::string(HKB_INVENTORY_TEST_DATA) + "/" + file, &bytes).is_ok());
  CheckOptions o;
  o.bundle_dir = dir.string();
  o.manifest_path = std::string(HKB_INVENTORY_TEST_DATA) + "/tiny-manifest.json";
  auto write = [&](const std::vector<uint8_t>& b) {
    std::ofstream(dir / file, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  };
  write(bytes);
  CheckResult r = hkb_tool::run_check(o);
  EXPECT_TRUE(r.ok()) << hkb_tool::check_text(r);
  ASSERT_EQ(r.images.size(), images);

  // Rename every occurrence of the symbol (the string tables hold it): the image no longer
  // defines it.
  const std::string sym = hkb::detail::kMultiprocessorsSymbol;
  size_t renamed = 0;
  for (auto it = bytes.begin();
       (it = std::search(it, bytes.end(), sym.begin(), sym.end())) != bytes.end(); ++renamed) {
    it[sym.size() - 1] = 'Z';
  }
  ASSERT_GE(renamed, images);
  write(bytes);
  r = hkb_tool::run_check(o);
  ASSERT_EQ(r.errors.size(), images) << hkb_tool::check_text(r);
  for (const auto& e : r.errors) {
    EXPECT_NE(e.find(file + " ["), std::string::npos) << e;
    EXPECT_NE(e.find("no hkb_multiprocessors global"), std::string::npos) << e;
  }
}

TEST(CheckGlobals, AmdgpuImagesNeedTheMultiprocessorCountGlobal) {
  expect_required("tiny.hsaco", 2);
}

TEST(CheckGlobals, CubinImagesNeedTheMultiprocessorCountGlobal) {
  expect_required("tiny.fatbin", 1);
}

}  // namespace
#endif
