#include "manifest.hpp"

#include <gtest/gtest.h>

namespace {

using hkb::detail::Manifest;
using hkb::detail::ParamKind;
using hkb::detail::parse_manifest;

TEST(Manifest, ParsesModulesKernelsAndParameterSizes) {
  Manifest m;
  const char* json = R"({"module": "fill", "kernels": [
    {"name": "fill_f32", "params": [["buf", "f32*"], ["value", "f32"], ["numel", "usize"]]},
    {"name": "copy2d_bf16", "params": [["src", "const bf16*"], ["d1", "u32"], ["v", "bf16"], ["b", "bool"], ["q", "f8e4m3"]]}
  ]})";
  ASSERT_TRUE(parse_manifest(json, "test", &m).is_ok());
  ASSERT_EQ(m.modules.size(), 1u);
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].name, "copy2d_bf16");  // sorted
  const auto& p = m.kernels[0].params;
  EXPECT_EQ(p[0].kind, ParamKind::kPointer);
  EXPECT_EQ(p[0].size, 8u);
  EXPECT_EQ(p[1].size, 4u);
  EXPECT_EQ(p[2].size, 2u);
  EXPECT_EQ(p[3].size, 1u);
  EXPECT_EQ(p[4].size, 1u);
  EXPECT_EQ(m.find("fill_f32"), 1);
  // void as a pointee (candle's raw block buffers); void by value is no parameter type.
  hkb::detail::ParamKind kind;
  uint32_t size = 0, align = 0;
  EXPECT_TRUE(hkb::detail::parse_param_type("const void*", &kind, &size, &align));
  EXPECT_EQ(kind, ParamKind::kPointer);
  EXPECT_EQ(size, 8u);
  EXPECT_EQ(align, 8u);
  EXPECT_TRUE(hkb::detail::parse_param_type("void*", &kind, &size, &align));
  EXPECT_FALSE(hkb::detail::parse_param_type("void", &kind, &size, &align));
  EXPECT_FALSE(hkb::detail::parse_param_type("const void", &kind, &size, &align));
  EXPECT_EQ(m.find("fill_f3"), -1);
  EXPECT_EQ(m.find(""), -1);
}

TEST(Manifest, NearestNamesComeFirst) {
  Manifest m;
  ASSERT_TRUE(parse_manifest(R"({"module": "a", "kernels": [
    {"name": "affine_f32", "params": []}, {"name": "affine_f64", "params": []},
    {"name": "fill_u8", "params": []}]})",
                             "test", &m)
                  .is_ok());
  const auto near = m.nearest("affine_f33", 2);
  ASSERT_EQ(near.size(), 2u);
  EXPECT_EQ(near[0], "affine_f32");
}

struct BadManifest {
  const char* json;
  const char* expected;
};

class ManifestErrors : public ::testing::TestWithParam<BadManifest> {};

TEST_P(ManifestErrors, AreReportedWithAReason) {
  Manifest m;
  const auto s = parse_manifest(GetParam().json, "bad.json", &m);
  ASSERT_EQ(s.code, HKB_ERROR_CORRUPT_MANIFEST);
  EXPECT_NE(s.message.find(GetParam().expected), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("bad.json"), std::string::npos) << s.message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ManifestErrors,
    ::testing::Values(
        BadManifest{"", "not valid JSON"},
        BadManifest{R"({"module": "a", "kernels": [{"name": "x", "params": [["a", "u)",
                    "not valid JSON"},
        BadManifest{R"({"module": "a", "kernels": []})", "lists no kernels"},
        BadManifest{R"({"format": 1, "modules": []})", "lists no kernels"},
        BadManifest{R"([1, 2])", "lacks"},
        BadManifest{R"({"module": "a", "kernels": [{"name": "x", "params": [["a", "float"]]}]})",
                    "unknown parameter type 'float'"},
        BadManifest{R"({"module": "a", "kernels": [{"name": "x", "params": [["a"]]}]})",
                    "[name, type]"},
        BadManifest{
            R"({"format": 1, "modules": [{"module": "a", "kernels": [{"name": "x", "params": []}]},
                     {"module": "b", "kernels": [{"name": "x", "params": []}]}]})",
            "'x' listed twice"},
        BadManifest{
            R"({"format": 1, "modules": [{"module": "a", "kernels": [{"name": "x", "params": []}]},
                     {"module": "a", "kernels": [{"name": "y", "params": []}]}]})",
            "module 'a' listed twice"},
        BadManifest{R"({"module": "a", "kernels": [{"name": "", "params": []}]})",
                    "empty kernel name"},
        BadManifest{
            R"({"module": "a", "launch": "fast", "kernels": [{"name": "x", "params": []}]})",
            "module 'a': \"launch\" must be \"resident\" or \"for_num_elems\", not "
            "\"fast\""},
        BadManifest{R"({"module": "a", "kernels": [{"name": "x", "launch": 1, "params": []}]})",
                    "kernel 'x': \"launch\" must be"}));

// A module's launch rule holds for its kernels unless a kernel names its own; none by default.
TEST(Manifest, LaunchRulesOfModulesAndKernels) {
  Manifest m;
  ASSERT_TRUE(parse_manifest(R"({"format": 1, "modules": [
    {"module": "a", "launch": "resident", "kernels": [{"name": "a1", "params": []},
     {"name": "a2", "launch": "for_num_elems", "params": []}]},
    {"module": "b", "kernels": [{"name": "b1", "params": []},
     {"name": "b2", "launch": "resident", "params": []}]}]})",
                             "rules", &m)
                  .is_ok());
  using hkb::detail::LaunchRule;
  EXPECT_EQ(m.kernels[m.find("a1")].launch, LaunchRule::kResident);
  EXPECT_EQ(m.kernels[m.find("a2")].launch, LaunchRule::kForNumElems);
  EXPECT_EQ(m.kernels[m.find("b1")].launch, LaunchRule::kNone);
  EXPECT_EQ(m.kernels[m.find("b2")].launch, LaunchRule::kResident);
}

// The widest element of a kernel's data pointers sizes its tuned grid: the usize layout arrays,
// void pointers and scalars do not count.
TEST(Manifest, ElementBytesOfDataPointers) {
  Manifest m;
  ASSERT_TRUE(parse_manifest(R"({"module": "a", "kernels": [
    {"name": "where", "params": [["info", "const usize*"], ["ids", "const u8*"],
                                 ["t", "const bf16*"], ["out", "bf16*"], ["v", "f64"]]},
    {"name": "cast", "params": [["inp", "const f8e4m3*"], ["out", "const f64*"]]},
    {"name": "raw", "params": [["info", "const usize*"], ["src", "const void*"], ["n", "i64"]]}]})",
                             "bytes", &m)
                  .is_ok());
  EXPECT_EQ(m.kernels[m.find("where")].element_bytes, 2u);
  EXPECT_EQ(m.kernels[m.find("cast")].element_bytes, 8u);
  EXPECT_EQ(m.kernels[m.find("raw")].element_bytes, 0u);
}

}  // namespace
