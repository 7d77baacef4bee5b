// CPU reference of the TERNARY module (kernels/ternary.hip): where picks t where the condition is
// non-zero and f elsewhere, bit for bit.
#pragma once

#include "dtypes.hpp"

#include <string>

namespace ref {

template <typename C, typename T>
T where_value(C cond, T on_true, T on_false) {
  return cond != 0 ? on_true : on_false;
}

// Value dtype tag in where's symbol names: fp8 is spelled `fp8_e4m3` there.
template <typename T>
std::string where_value_tag() {
  if constexpr (std::is_same_v<T, f8e4m3>) {
    return "fp8_e4m3";
  } else {
    return tag<T>();
  }
}

// Symbol of where for condition dtype C and value dtype T, e.g. where_u8_f32.
template <typename C, typename T>
std::string where_symbol() {
  return std::string("where_") + tag<C>() + "_" + where_value_tag<T>();
}

}  // namespace ref
