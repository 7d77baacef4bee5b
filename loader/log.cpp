#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cctype>
#include <cstdlib>

namespace hkb::detail {

spdlog::level::level_enum parse_log_level(const char* value, std::string* complaint) {
  complaint->clear();
  if (value == nullptr || *value == '\0') return spdlog::level::warn;
  std::string name(value);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "warning") return spdlog::level::warn;
  if (name == "off") return spdlog::level::off;
  // spdlog maps every name it does not know to "off", which would hide warnings silently.
  const spdlog::level::level_enum level = spdlog::level::from_str(name);
  if (level != spdlog::level::off) return level;
  *complaint = "HKB_LOG_LEVEL='" + std::string(value) +
               "' is not a level (trace, debug, info, warn, error, critical, off); using warn";
  return spdlog::level::warn;
}

std::shared_ptr<spdlog::logger> logger() {
  static const std::shared_ptr<spdlog::logger> log = [] {
    auto l =
        std::make_shared<spdlog::logger>("hkb", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    std::string complaint;
    l->set_level(parse_log_level(std::getenv("HKB_LOG_LEVEL"), &complaint));
    l->set_pattern("[%H:%M:%S.%e] [hkb] [%l] %v");
    if (!complaint.empty()) l->warn("{}", complaint);
    return l;
  }();
  return log;
}

}  // namespace hkb::detail
