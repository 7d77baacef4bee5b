// Inputs that once crashed the tool or misled its user (issue #23): files that are not regular
// files, code objects whose kernel names are not UTF-8, unknown HKB_LOG_LEVEL values and a full
// target ID given to `hkb report --target`. Each must give a clear message, never a crash.
#include "bundle_source.hpp"
#include "log.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#if defined(HKB_INVENTORY_TEST_DATA)
#include "inventory.hpp"
#include "tool_util.hpp"
#endif

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test_util::fresh_test_dir("hkb_reliab_"); }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& p, const Bytes& b) {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  fs::path dir_;
};

using ReadRegularFile = TempDir;

TEST_F(ReadRegularFile, RefusesDirectoriesDevicesAndFifos) {
  Bytes out;
  auto s = hkb::detail::read_regular_file(dir_.string(), 1 << 20, &out);
  EXPECT_EQ(s.code, HKB_ERROR_IO);
  EXPECT_NE(s.message.find("is a directory"), std::string::npos) << s.message;
  s = hkb::detail::read_regular_file("/dev/zero", 1 << 20, &out);
  EXPECT_EQ(s.code, HKB_ERROR_IO);
  EXPECT_NE(s.message.find("a device"), std::string::npos) << s.message;
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  s = hkb::detail::read_regular_file(fifo.string(), 1 << 20, &out);  // must not block
  EXPECT_NE(s.message.find("a FIFO"), std::string::npos) << s.message;
  s = hkb::detail::read_regular_file((dir_ / "absent").string(), 1 << 20, &out);
  EXPECT_NE(s.message.find("cannot open"), std::string::npos) << s.message;
}

TEST_F(ReadRegularFile, BoundsTheSizeAndReadsSmallFiles) {
  write(dir_ / "ten", Bytes(10, 7));
  Bytes out;
  auto s = hkb::detail::read_regular_file((dir_ / "ten").string(), 9, &out);
  EXPECT_EQ(s.code, HKB_ERROR_IO);
  EXPECT_NE(s.message.find("more than the 9 bytes"), std::string::npos) << s.message;
  ASSERT_TRUE(hkb::detail::read_regular_file((dir_ / "ten").string(), 10, &out).is_ok());
  EXPECT_EQ(out, Bytes(10, 7));
  write(dir_ / "empty", {});
  ASSERT_TRUE(hkb::detail::read_regular_file((dir_ / "empty").string(), 10, &out).is_ok());
  EXPECT_TRUE(out.empty());
}

using DirectorySource = TempDir;

TEST_F(DirectorySource, ADirectoryInPlaceOfAModuleIsAnIoErrorNotOutOfMemory) {
  fs::create_directories(dir_ / "affine.hsaco");
  auto src = hkb::detail::make_directory_source(dir_.string(), ".hsaco");
  hkb::detail::ModuleImage image;
  const auto s = src->read("affine", &image);
  EXPECT_EQ(s.code, HKB_ERROR_IO);
  EXPECT_NE(s.message.find("affine.hsaco: is a directory"), std::string::npos) << s.message;
}

TEST(LogLevel, UnknownNamesWarnInsteadOfSilencingEverything) {
  std::string complaint;
  EXPECT_EQ(hkb::detail::parse_log_level("garbage", &complaint), spdlog::level::warn);
  EXPECT_NE(complaint.find("HKB_LOG_LEVEL='garbage'"), std::string::npos) << complaint;
  EXPECT_EQ(hkb::detail::parse_log_level("TRACE", &complaint), spdlog::level::trace);
  EXPECT_TRUE(complaint.empty());
  EXPECT_EQ(hkb::detail::parse_log_level("", &complaint), spdlog::level::warn);
  EXPECT_TRUE(complaint.empty());
  EXPECT_EQ(hkb::detail::parse_log_level(nullptr, &complaint), spdlog::level::warn);
  EXPECT_EQ(hkb::detail::parse_log_level("Off", &complaint), spdlog::level::off);
  EXPECT_TRUE(complaint.empty());
  EXPECT_EQ(hkb::detail::parse_log_level("error", &complaint), spdlog::level::err);
  EXPECT_EQ(hkb::detail::parse_log_level("warning", &complaint), spdlog::level::warn);
}

#if defined(HKB_INVENTORY_TEST_DATA)

const std::string kData = HKB_INVENTORY_TEST_DATA;

class ToolInputs : public TempDir {
 protected:
  Bytes tiny() {
    Bytes b;
    EXPECT_TRUE(hkb_tool::read_file_bytes(kData + "/tiny.hsaco", &b).is_ok());
    return b;
  }
};

TEST_F(ToolInputs, DirectoriesAndDevicesAreErrorsNotAborts) {
  const hkb_tool::InfoResult info = hkb_tool::run_info(dir_.string());
  EXPECT_NE(info.error.find("is a directory"), std::string::npos) << info.error;
  EXPECT_NE(hkb_tool::run_info("/dev/zero").error.find("a device"), std::string::npos);

  hkb_tool::CheckOptions o{dir_.string(), dir_.string(), ""};
  hkb_tool::CheckResult check = hkb_tool::run_check(o);
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.errors[0].find("is a directory"), std::string::npos) << check.errors[0];

  fs::create_directories(dir_ / "tiny.hsaco");
  o.manifest_path = kData + "/tiny-manifest.json";
  check = hkb_tool::run_check(o);
  ASSERT_FALSE(check.ok());
  EXPECT_NE(hkb_tool::check_text(check).find("tiny.hsaco: is a directory"), std::string::npos)
      << hkb_tool::check_text(check);
  const hkb_tool::ReportResult report = hkb_tool::run_report({dir_.string(), ""});
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_NE(report.errors[0].find("is a directory"), std::string::npos) << report.errors[0];
}

TEST_F(ToolInputs, JsonOutputSurvivesKernelNamesThatAreNotUtf8) {
  Bytes b = tiny();
  const std::string name = "tiny_axpy";
  size_t patched = 0;
  for (size_t i = 0; i + name.size() <= b.size(); ++i) {
    if (std::equal(name.begin(), name.end(), b.begin() + i)) b[i + 4] = 0xFF, ++patched;
  }
  ASSERT_GT(patched, 0u);
  write(dir_ / "tiny.hsaco", b);
  const std::string path = (dir_ / "tiny.hsaco").string();
  const hkb_tool::InfoResult info = hkb_tool::run_info(path);
  std::string text;
  ASSERT_NO_THROW(text = hkb_tool::json_text(hkb_tool::info_json(info)));
  EXPECT_NE(text.find("tiny\xEF\xBF\xBD"
                      "axpy"),
            std::string::npos)
      << text;  // U+FFFD
  const hkb_tool::CheckResult check =
      hkb_tool::run_check({dir_.string(), kData + "/tiny-manifest.json", ""});
  EXPECT_NO_THROW(hkb_tool::json_text(hkb_tool::check_json(check)));
  const hkb_tool::ReportResult report = hkb_tool::run_report({dir_.string(), ""});
  EXPECT_NO_THROW(hkb_tool::json_text(hkb_tool::report_json(report)));
}

TEST_F(ToolInputs, ReportTargetTakesADevicesFullTargetId) {
  write(dir_ / "tiny.hsaco", tiny());
  const hkb_tool::ReportResult r = hkb_tool::run_report({dir_.string(), "gfx906:sramecc+:xnack-"});
  EXPECT_TRUE(r.errors.empty()) << hkb_tool::report_text(r);
  ASSERT_EQ(r.rows.size(), 2u) << hkb_tool::report_text(r);
  for (const auto& row : r.rows) EXPECT_EQ(row.target, "gfx906");
  const hkb_tool::ReportResult none = hkb_tool::run_report({dir_.string(), "gfx90a:xnack-"});
  EXPECT_EQ(none.rows.size(), 0u);
  EXPECT_EQ(none.errors.size(), 1u);
}

TEST(Glob, MatchesWholeNames) {
  using hkb_tool::glob_match;
  EXPECT_TRUE(glob_match("affine_*", "affine_f32"));
  EXPECT_FALSE(glob_match("affine_*", "xaffine_f32"));
  EXPECT_TRUE(glob_match("*_f?2", "affine_f32"));
  EXPECT_TRUE(glob_match("*_[bf][f1]*", "affine_bf16"));
  EXPECT_FALSE(glob_match("*_[!b]*", "affine_bf16"));
  EXPECT_TRUE(glob_match("u[a-c]ary", "ubary"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_TRUE(glob_match("a[", "a["));
  EXPECT_FALSE(glob_match("a*a*a*a*a*a*a*b", std::string(200, 'a')));
}

#endif  // HKB_INVENTORY_TEST_DATA

}  // namespace
