#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>

namespace hkb::detail {

std::shared_ptr<spdlog::logger> logger() {
  static const std::shared_ptr<spdlog::logger> log = [] {
    auto l =
        std::make_shared<spdlog::logger>("hkb", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    spdlog::level::level_enum level = spdlog::level::warn;
    if (const char* env = std::getenv("HKB_LOG_LEVEL")) {
      level = spdlog::level::from_str(env);  // unknown names map to "off"
    }
    l->set_level(level);
    l->set_pattern("[%H:%M:%S.%e] [hkb] [%l] %v");
    return l;
  }();
  return log;
}

}  // namespace hkb::detail
