// The library's spdlog logger "hkb", level from HKB_LOG_LEVEL (trace, debug, info, warn, error,
// critical, off, in any case; default warn), written to stderr.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace hkb::detail {

std::shared_ptr<spdlog::logger> logger();

// The level HKB_LOG_LEVEL=`value` selects. Unset or empty gives warn; a name spdlog does not
// know also gives warn, and `complaint` receives a message saying so (else it is cleared).
spdlog::level::level_enum parse_log_level(const char* value, std::string* complaint);

}  // namespace hkb::detail
