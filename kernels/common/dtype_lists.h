// The dtype lists families instantiate their entry points from. Each X(TAG, TYPE) names candle's
// dtype tag as it appears in symbol names and the storage type. candle spells fp8 two ways
// (`f8_e4m3` in affine/binary/cast/fill/indexing/ucopy, `fp8_e4m3` in other unary ops and where),
// so the fp8 entry is listed apart and each family adds the spelling it exports.
#pragma once

#include "dtypes.h"

#define HKB_DTYPES_FLOAT(X) X(bf16, hkb::bf16) X(f16, hkb::f16) X(f32, float) X(f64, double)
#define HKB_DTYPES_INT(X) \
  X(u8, uint8_t) X(u32, uint32_t) X(i16, int16_t) X(i32, int32_t) X(i64, int64_t)
#define HKB_DTYPES_F8(X) X(f8_e4m3, hkb::f8e4m3)
#define HKB_DTYPES_F8_ALT(X) X(fp8_e4m3, hkb::f8e4m3)
// Every dtype hkb stores, with candle's primary fp8 spelling.
#define HKB_DTYPES_ALL(X) HKB_DTYPES_FLOAT(X) HKB_DTYPES_INT(X) HKB_DTYPES_F8(X)
// Index dtypes of the indexing ops.
#define HKB_DTYPES_INDEX(X) \
  X(u8, uint8_t) X(u32, uint32_t) X(i16, int16_t) X(i32, int32_t) X(i64, int64_t)
