#include "code_object.hpp"
#include "fake_runtime.hpp"

#include <gtest/gtest.h>

namespace {

using namespace hkb::detail;

TEST(CodeObject, ParsesBundleEntries) {
  const auto b = fake::make_bundle({"gfx906", "gfx90a:xnack-"});
  std::vector<BundleEntry> e;
  ASSERT_TRUE(parse_offload_bundle(b.data(), b.size(), "t", &e).is_ok());
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].kind, "host");
  EXPECT_FALSE(e[0].is_amdgpu());
  EXPECT_EQ(e[1].kind, "hipv4");
  EXPECT_EQ(e[1].target, "gfx906");
  EXPECT_EQ(e[2].target, "gfx90a:xnack-");
  EXPECT_TRUE(e[2].is_amdgpu());
  EXPECT_EQ(bundle_targets(e), (std::vector<std::string>{"gfx906", "gfx90a:xnack-"}));
}

TEST(CodeObject, TargetCompatibility) {
  EXPECT_TRUE(target_compatible("gfx90a", "gfx90a:sramecc+:xnack-"));
  EXPECT_TRUE(target_compatible("gfx90a:xnack-", "gfx90a:sramecc+:xnack-"));
  EXPECT_FALSE(target_compatible("gfx90a:xnack+", "gfx90a:sramecc+:xnack-"));
  EXPECT_FALSE(target_compatible("gfx908", "gfx90a:sramecc+:xnack-"));
  EXPECT_FALSE(target_compatible("gfx90", "gfx90a"));
  EXPECT_TRUE(target_compatible("gfx1030", "gfx1030"));
}

TEST(CodeObject, SelectsTheMostSpecificCompatibleEntry) {
  const auto b = fake::make_bundle({"gfx90a", "gfx90a:xnack-", "gfx1030"});
  SelectedImage img;
  ASSERT_TRUE(select_amd_image(b.data(), b.size(), "gfx90a:sramecc+:xnack-", "t", &img).is_ok());
  EXPECT_EQ(img.target, "gfx90a:xnack-");
  ASSERT_TRUE(select_amd_image(b.data(), b.size(), "gfx1030", "t", &img).is_ok());
  EXPECT_EQ(img.target, "gfx1030");
}

TEST(CodeObject, MissingTargetNamesDeviceAndBundleTargets) {
  const auto b = fake::make_bundle({"gfx906", "gfx1030"});
  SelectedImage img;
  const auto s =
      select_amd_image(b.data(), b.size(), "gfx942:sramecc+:xnack-", "affine.hsaco", &img);
  EXPECT_EQ(s.code, HKB_ERROR_TARGET_MISSING);
  EXPECT_NE(s.message.find("gfx942:sramecc+:xnack-"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("gfx906, gfx1030"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("affine.hsaco"), std::string::npos) << s.message;
}

TEST(CodeObject, BundleWithoutAmdEntryIsTargetMissing) {
  const auto b = fake::make_bundle({}, true);
  SelectedImage img;
  EXPECT_EQ(select_amd_image(b.data(), b.size(), "gfx90a", "t", &img).code,
            HKB_ERROR_TARGET_MISSING);
}

TEST(CodeObject, EveryTruncationIsRejectedCleanly) {
  const auto b = fake::make_bundle({"gfx906", "gfx90a"});
  for (size_t len = 0; len < b.size(); ++len) {
    std::vector<uint8_t> cut(b.begin(), b.begin() + len);
    SelectedImage img;
    const auto s = select_amd_image(cut.data(), cut.size(), "gfx90a", "cut", &img);
    // Short prefixes are not bundles at all; longer ones fail on the table or an entry's bounds.
    EXPECT_EQ(s.code, HKB_ERROR_CORRUPT_BUNDLE) << "length " << len << ": " << s.message;
  }
}

TEST(CodeObject, CorruptHeaderFieldsAreRejected) {
  auto b = fake::make_bundle({"gfx90a"});
  std::vector<BundleEntry> e;
  auto bad_count = b;
  bad_count[24] = 0xFF, bad_count[31] = 0x7F;  // absurd entry count
  EXPECT_EQ(parse_offload_bundle(bad_count.data(), bad_count.size(), "t", &e).code,
            HKB_ERROR_CORRUPT_BUNDLE);
  auto bad_offset = b;
  bad_offset[32 + 7] = 0x10;  // first entry's offset far past the end
  EXPECT_EQ(parse_offload_bundle(bad_offset.data(), bad_offset.size(), "t", &e).code,
            HKB_ERROR_CORRUPT_BUNDLE);
  const uint8_t junk[] = "this is not a code object at all";
  SelectedImage img;
  EXPECT_EQ(select_amd_image(junk, sizeof(junk), "gfx90a", "t", &img).code,
            HKB_ERROR_CORRUPT_BUNDLE);
  EXPECT_EQ(check_nvidia_image(junk, sizeof(junk), "t").code, HKB_ERROR_CORRUPT_BUNDLE);
}

TEST(CodeObject, EntryThatIsNotElfIsCorrupt) {
  auto b = fake::make_bundle({"gfx90a"});
  b[b.size() - 16] = 'X';  // break the entry's ELF magic
  SelectedImage img;
  EXPECT_EQ(select_amd_image(b.data(), b.size(), "gfx90a", "t", &img).code,
            HKB_ERROR_CORRUPT_BUNDLE);
}

}  // namespace
