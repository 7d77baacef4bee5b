// The library's spdlog logger "hkb", level from HKB_LOG_LEVEL (trace, debug, info, warn, error,
// critical, off; default warn), written to stderr.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>

namespace hkb::detail {

std::shared_ptr<spdlog::logger> logger();

}  // namespace hkb::detail
