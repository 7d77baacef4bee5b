// The hkb tool as a user runs it: exit codes (0 ok, 1 check failed or bad input, 2 usage),
// messages that name the problem, --version, globs and --json on every subcommand.
#if defined(HKB_TOOL_PATH)

#include "c_api.hpp"
#include "metadata_patch.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

// The file name ending of this flavour's code objects (.hsaco, .fatbin, .cpu): HKB_BUNDLE_DIR files
// with another ending are not the loader's.
constexpr const char* kSuffix = HKB_TEST_BUNDLE_SUFFIX;

struct Outcome {
  int exit = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_util::fresh_test_dir("hkb_cli_");
    fs::create_directories(dir_ / "work");
    hkb::detail::Manifest m;
    ASSERT_TRUE(hkb::detail::embedded_manifest(&m).is_ok());
    ASSERT_FALSE(m.modules.empty());
    modules_ = m.modules;
    first_kernel_ = m.kernels[0].name;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `hkb ARGS` with ENV prefixed (e.g. "HKB_BUNDLE_DIR=/x"); captures both streams.
  Outcome hkb(const std::string& args, const std::string& env = "") {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string cmd = "env " + env + " '" + std::string(HKB_TOOL_PATH) + "' " + args +
                            " > '" + out.string() + "' 2> '" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    Outcome r;
    r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  std::string work() const { return (dir_ / "work").string(); }
  static bool valid_json(const std::string& s) { return nlohmann::json::accept(s); }

  fs::path dir_;
  std::vector<std::string> modules_;
  std::string first_kernel_;
};

TEST_F(Cli, VersionAndUsageErrors) {
  Outcome r = hkb("--version");
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(r.out.rfind("hkb " + std::to_string(HKB_VERSION_MAJOR) + ".", 0), 0u) << r.out;
  r = hkb("lst");
  EXPECT_EQ(r.exit, 2);
  EXPECT_NE(r.err.find("unknown command 'lst'; did you mean 'list'?"), std::string::npos) << r.err;
  EXPECT_EQ(hkb("list --no-such-option").exit, 2);
  EXPECT_EQ(hkb("").exit, 2);
  r = hkb("--help");
  EXPECT_EQ(r.exit, 0);
  EXPECT_NE(r.out.find("Exit status: 0 success"), std::string::npos) << r.out;
}

TEST_F(Cli, ListFiltersByModuleAndGlob) {
  Outcome r = hkb("list --module nosuch");
  EXPECT_EQ(r.exit, 1);
  EXPECT_NE(r.err.find("no module named 'nosuch'"), std::string::npos) << r.err;
  r = hkb("list --names '" + first_kernel_ + "'");
  EXPECT_EQ(r.exit, 0);
  EXPECT_EQ(r.out, first_kernel_ + "\n");
  r = hkb("list --names '" + modules_[0] + "_*'");
  EXPECT_EQ(r.exit, 0);
  EXPECT_NE(r.out.find(first_kernel_), std::string::npos);
  r = hkb("list 'zz_no_such_*'");
  EXPECT_EQ(r.exit, 1);
  EXPECT_NE(r.err.find("no kernel name matches 'zz_no_such_*'"), std::string::npos) << r.err;
  r = hkb("list --json");
  EXPECT_EQ(r.exit, 0);
  ASSERT_TRUE(valid_json(r.out)) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["kernels"][0]["name"], first_kernel_);
}

TEST_F(Cli, BadFilesAreExitOneWithAMessage) {
  Outcome r = hkb("info '" + work() + "'");
  EXPECT_EQ(r.exit, 1);
  EXPECT_NE(r.out.find("is a directory"), std::string::npos) << r.out << r.err;
  r = hkb("info /dev/zero");
  EXPECT_EQ(r.exit, 1);
  EXPECT_NE(r.out.find("is a device"), std::string::npos) << r.out << r.err;
  r = hkb("info --json '" + work() + "'");
  EXPECT_EQ(r.exit, 1);
  EXPECT_TRUE(valid_json(r.out)) << r.out;
  r = hkb("check --manifest '" + work() + "'");
  EXPECT_EQ(r.exit, 1);
  EXPECT_NE(r.out.find("is a directory"), std::string::npos) << r.out << r.err;
  // check reads GPU code objects (.hsaco or .fatbin) in every flavour, the cpu one included.
  const std::string code_object = std::string(kSuffix) == ".fatbin" ? ".fatbin" : ".hsaco";
  fs::create_directories(dir_ / "work" / (modules_[0] + code_object));
  r = hkb("check --no-candle --bundle '" + work() + "'");
  EXPECT_EQ(r.exit, 1);
  EXPECT_NE(r.out.find("is a directory"), std::string::npos) << r.out << r.err;
  r = hkb("report --json --bundle '" + work() + "'");
  EXPECT_EQ(r.exit, 1);
  EXPECT_TRUE(valid_json(r.out)) << r.out;
}

TEST_F(Cli, DoctorRefusesWhatTheLoaderRefuses) {
  const std::string env = "HKB_BUNDLE_DIR='" + work() + "'";
  for (const auto& m : modules_) std::ofstream(dir_ / "work" / (m + kSuffix)) << "random bytes";
  Outcome r = hkb("doctor", env);
  EXPECT_EQ(r.exit, 1) << r.out;
  EXPECT_NE(r.out.find("CORRUPT"), std::string::npos) << r.out;
  for (const auto& m : modules_) std::ofstream(dir_ / "work" / (m + kSuffix), std::ios::trunc);
  r = hkb("doctor --json", env);
  EXPECT_EQ(r.exit, 1) << r.out;
  ASSERT_TRUE(valid_json(r.out)) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["modules"][0]["ok"], false);
  fs::remove_all(dir_ / "work");
  for (const auto& m : modules_) fs::create_directories(dir_ / "work" / (m + kSuffix));
  r = hkb("doctor", env);
  EXPECT_EQ(r.exit, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("is a directory"), std::string::npos) << r.out;
}

#if defined(HKB_INVENTORY_TEST_DATA)
// CI's gate on the AMD bundle: `report --fail-on-spill` exits 1 and names, on stderr, every kernel
// image (module, target, kernel) that spills registers or uses scratch; a clean bundle passes.
TEST_F(Cli, ReportFailOnSpillNamesEveryKernelAndTarget) {
  std::ifstream f(std::string(HKB_INVENTORY_TEST_DATA) + "/tiny.hsaco", std::ios::binary);
  const test_util::Bytes tiny((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
  ASSERT_GT(tiny.size(), 4096u);
  auto install = [this](const test_util::Bytes& b) {
    std::ofstream(dir_ / "work" / "tiny.hsaco", std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  };
  const std::string gate = "report --fail-on-spill --bundle '" + work() + "'";
  install(tiny);
  Outcome r = hkb(gate);
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");

  test_util::Bytes b = tiny;
  ASSERT_EQ(test_util::patch_fixint(&b, ".sgpr_spill_count", 0, 2), 4u);
  install(b);
  r = hkb(gate);
  EXPECT_EQ(r.exit, 1) << r.out << r.err;
  for (const char* target : {"gfx906", "gfx1030"}) {
    for (const char* kernel : {"tiny_axpy", "tiny_flags"}) {
      const std::string line = std::string("tiny ") + target + " " + kernel + ": 2 SGPR spills";
      EXPECT_NE(r.err.find(line), std::string::npos) << line << "\n" << r.err;
    }
  }
  r = hkb("report --bundle '" + work() + "'");  // without the flag: a report, not a failure
  EXPECT_EQ(r.exit, 0) << r.err;
  r = hkb("report --json --fail-on-spill --bundle '" + work() + "'");
  EXPECT_EQ(r.exit, 1);
  ASSERT_TRUE(valid_json(r.out)) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["spilling"], 4);

  b = tiny;
  ASSERT_EQ(test_util::patch_fixint(&b, ".private_segment_fixed_size", 0, 8), 4u);
  install(b);
  r = hkb(gate);
  EXPECT_EQ(r.exit, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("tiny gfx906 tiny_axpy: 8 bytes of scratch"), std::string::npos) << r.err;
}
#endif

TEST_F(Cli, UnknownLogLevelIsReported) {
  const Outcome r = hkb("doctor", "HKB_LOG_LEVEL=garbage HKB_BUNDLE_DIR=/nonexistent");
  EXPECT_NE(r.err.find("HKB_LOG_LEVEL='garbage' is not a level"), std::string::npos) << r.err;
}

}  // namespace

#endif  // HKB_TOOL_PATH
