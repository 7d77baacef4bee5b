// Internal status: a C ABI status code plus a message naming what was asked for and what was found.
#pragma once

#include <hkb/hkb.h>

#include <string>
#include <utility>

namespace hkb::detail {

struct Status {
  hkb_status code = HKB_SUCCESS;
  std::string message;

  static Status ok() { return {}; }
  bool is_ok() const noexcept { return code == HKB_SUCCESS; }
  explicit operator bool() const noexcept { return is_ok(); }
};

inline Status error(hkb_status code, std::string message) {
  return {code, std::move(message)};
}

#define HKB_RETURN_IF_ERROR(expr)      \
  do {                                 \
    ::hkb::detail::Status s_ = (expr); \
    if (!s_.is_ok()) return s_;        \
  } while (0)

}  // namespace hkb::detail
