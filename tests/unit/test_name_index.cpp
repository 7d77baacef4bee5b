// The name index behind a cached hkb_function_get: every name of the real manifest and of large
// synthetic ones is found at its index, every near miss is not, the C ABI's cached path agrees
// with the loading path, and lookups racing first loads all see one handle per kernel.
#include "c_api.hpp"
#include "fake_runtime.hpp"
#include "name_index.hpp"

#include <gtest/gtest.h>
#include <hkb/hkb.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

using hkb::detail::KernelInfo;
using hkb::detail::Manifest;
using hkb::detail::NameIndex;

std::vector<KernelInfo> kernels_named(const std::vector<std::string>& names) {
  std::vector<KernelInfo> out;
  for (const auto& n : names) out.push_back(KernelInfo{n, 0, {}});
  return out;
}

// The binary search over the sorted manifest, which the index must agree with on every name.
void expect_agrees(const Manifest& m, const NameIndex& index, const std::string& name) {
  EXPECT_EQ(index.find(name.c_str()), m.find(name)) << "'" << name << "'";
  EXPECT_EQ(index.find(std::string_view(name)), m.find(name)) << "'" << name << "'";
}

TEST(NameIndex, FindsEveryKernelOfTheEmbeddedManifestAndNoNearMiss) {
  Manifest m;
  ASSERT_TRUE(hkb::detail::embedded_manifest(&m).is_ok());
  ASSERT_FALSE(m.kernels.empty());
  const NameIndex index(m.kernels);
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const std::string& name = m.kernels[i].name;
    ASSERT_EQ(index.find(name.c_str()), static_cast<int64_t>(i)) << name;
    std::string changed = name;
    changed.back() = static_cast<char>(changed.back() ^ 1);
    expect_agrees(m, index, changed);
    expect_agrees(m, index, name + "x");
    expect_agrees(m, index, name + '\xff');
    expect_agrees(m, index, name.substr(0, name.size() - 1));
    expect_agrees(m, index, "_" + name);
  }
  // Quarter full: a hit costs one slot, rarely a few neighbours in the same cache lines.
  EXPECT_LE(index.longest_probe(), 12u);
}

TEST(NameIndex, EmptyNullAndLongNamesAreMisses) {
  const NameIndex index(kernels_named({"affine_f32", "ucopy_bf16"}));
  EXPECT_EQ(index.find(static_cast<const char*>(nullptr)), -1);
  EXPECT_EQ(index.find(""), -1);
  EXPECT_EQ(index.find(std::string(5000, 'a').c_str()), -1);
  EXPECT_EQ(index.find(std::string_view("affine_f32\0", 11)), -1);  // the NUL is part of it
  EXPECT_EQ(index.find("ucopy_bf16"), 1);
  EXPECT_EQ(NameIndex().find("affine_f32"), -1);  // an empty index
}

TEST(NameIndex, LargeSyntheticInventoriesWithSharedPrefixesAndEveryLength) {
  std::vector<std::string> names;
  for (int i = 0; i < 20000; ++i) names.push_back("k" + std::to_string(i));
  // Every length from 1 to 40, all sharing prefixes: the 8-byte words and the tail must both
  // count.
  for (size_t len = 1; len <= 40; ++len) {
    names.push_back(std::string(len, 'z'));
    names.push_back(std::string(len - 1, 'z') + 'y');
  }
  const NameIndex index(kernels_named(names));
  for (size_t i = 0; i < names.size(); ++i)
    ASSERT_EQ(index.find(names[i]), static_cast<int64_t>(i));
  EXPECT_EQ(index.find("k20000"), -1);
  EXPECT_EQ(index.find("k-1"), -1);
  EXPECT_EQ(index.find(std::string(41, 'z')), -1);
  EXPECT_EQ(index.find(std::string(39, 'z') + 'x'), -1);
  EXPECT_LE(index.longest_probe(), 16u);
}

TEST(NameIndex, RefusesDuplicateAndEmptyNames) {
  EXPECT_THROW(NameIndex(kernels_named({"a", "b", "a"})), std::invalid_argument);
  EXPECT_THROW(NameIndex(kernels_named({"a", ""})), std::invalid_argument);
}

class CachedLookup : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lib = fake::make_library(&state);
    lib_ = lib.get();
    hkb::detail::install_library(std::move(lib));
    ASSERT_EQ(hkb_context_get(0, &ctx), HKB_SUCCESS) << hkb_last_error();
  }
  void TearDown() override { hkb_shutdown(); }
  fake::State state;
  hkb::detail::Library* lib_ = nullptr;
  hkb_context ctx = nullptr;
};

TEST_F(CachedLookup, HitsOnlyAfterTheFirstLoadAndAgreesWithIt) {
  EXPECT_EQ(hkb::detail::Library::cached(ctx, "fill_u8"), nullptr);  // module not loaded yet
  hkb_function fn = nullptr;
  ASSERT_EQ(hkb_function_get(ctx, "fill_u8", &fn), HKB_SUCCESS) << hkb_last_error();
  EXPECT_EQ(hkb::detail::Library::cached(ctx, "fill_u8"), fn);
  EXPECT_EQ(hkb::detail::Library::cached(ctx, "fill_f64"), nullptr);  // same module, not asked
  hkb_function again = nullptr;
  ASSERT_EQ(hkb_function_get(ctx, "fill_u8", &again), HKB_SUCCESS);
  EXPECT_EQ(again, fn);
  EXPECT_EQ(state.loads.load(), 1);
  EXPECT_STREQ(hkb_function_name(fn), "fill_u8");
}

TEST_F(CachedLookup, MissesStillNameTheNearestKernelsAndCheckArguments) {
  hkb_function fn = nullptr;
  ASSERT_EQ(hkb_function_get(ctx, "affine_f32", &fn), HKB_SUCCESS);
  EXPECT_EQ(hkb_function_get(ctx, "affine_f33", &fn), HKB_ERROR_UNKNOWN_KERNEL);
  EXPECT_NE(std::string(hkb_last_error()).find("nearest names: affine_f32"), std::string::npos)
      << hkb_last_error();
  EXPECT_EQ(hkb_function_get(ctx, nullptr, &fn), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hkb_function_get(ctx, "affine_f32", nullptr), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hkb_function_get(nullptr, "affine_f32", &fn), HKB_ERROR_INVALID_ARGUMENT);
}

TEST_F(CachedLookup, ADeadContextIsRefusedEvenForACachedKernel) {
  hkb_function fn = nullptr;
  ASSERT_EQ(hkb_function_get(ctx, "fill_f64", &fn), HKB_SUCCESS);
  ASSERT_EQ(hkb_shutdown(), HKB_SUCCESS);
  EXPECT_EQ(hkb::detail::Library::cached(ctx, "fill_f64"), nullptr);
  EXPECT_EQ(hkb_function_get(ctx, "fill_f64", &fn), HKB_ERROR_SHUT_DOWN);
}

TEST_F(CachedLookup, LookupsRacingFirstLoadsSeeOneHandlePerKernel) {
  const char* names[] = {"fill_u8", "fill_f64", "affine_f32", "affine_bf16"};
  constexpr int kThreads = 8, kRounds = 2000;
  std::atomic<bool> go{false};
  std::vector<std::vector<hkb_function>> seen(kThreads, std::vector<hkb_function>(4, nullptr));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int r = 0; r < kRounds; ++r) {
        const int k = (t + r) % 4;
        hkb_function fn = nullptr;
        if (hkb_function_get(ctx, names[k], &fn) != HKB_SUCCESS || fn == nullptr) {
          bad.fetch_add(1);
          continue;
        }
        if (seen[t][k] == nullptr) seen[t][k] = fn;
        if (seen[t][k] != fn) bad.fetch_add(1);
      }
    });
  }
  go.store(true);
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
  EXPECT_EQ(state.loads.load(), 2);  // each module once
}

}  // namespace
