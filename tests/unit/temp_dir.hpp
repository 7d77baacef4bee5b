// A fresh directory per test, named after the process and the running test, removed afterwards.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace test_util {

inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (prefix + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace test_util
