// Unit tests of the inventory's parts that need no code object: candle's ABI table, the AMD
// occupancy rules of `hkb report`, and the msgpack decoder (the code object tests are in
// test_inventory.cpp).
#if defined(HKB_INVENTORY_TEST_DATA)

#include "inventory.hpp"
#include "metadata_patch.hpp"
#include "msgpack.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace hkb_tool;
using test_util::Bytes;

const std::string kData = HKB_INVENTORY_TEST_DATA;

TEST(InventoryCandleAbi, CTypeSizes) {
  EXPECT_EQ(candle_ctype_size("const size_t *"), 8u);
  EXPECT_EQ(candle_ctype_size("__nv_bfloat16"), 2u);
  EXPECT_EQ(candle_ctype_size("const __half"), 2u);
  EXPECT_EQ(candle_ctype_size("const __nv_fp8_e4m3"), 1u);
  EXPECT_EQ(candle_ctype_size("bool"), 1u);
  EXPECT_EQ(candle_ctype_size("int16_t"), 2u);
  EXPECT_EQ(candle_ctype_size("const double"), 8u);
  EXPECT_EQ(candle_ctype_size("int"), 4u);
  EXPECT_EQ(candle_ctype_size("mystery_t"), 0u);
  std::vector<CandleSymbol> s;
  EXPECT_FALSE(parse_candle_abi("module\tsymbol\tparams\nA\tx\tmystery_t v\n", "t", &s).is_ok());
  EXPECT_FALSE(parse_candle_abi("module\tsymbol\tparams\nA\tx\t\nA\tx\t\n", "t", &s).is_ok());
  EXPECT_FALSE(parse_candle_abi("", "t", &s).is_ok());
}

TEST(InventoryCandleAbi, TheCheckedInTableParses) {
  std::string text;
  {
    std::ifstream f(kData + "/../../../manifests/candle-abi.tsv");
    text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  ASSERT_EQ(text.rfind("# candle 0.11.0, commit 2a13b0f3ff62f7e67013597f2996f764c5735e21", 0), 0u);
  std::vector<CandleSymbol> s;
  const Status st = parse_candle_abi(text, "candle-abi.tsv", &s);
  ASSERT_TRUE(st.is_ok()) << st.message;
  EXPECT_EQ(s.size(), 748u);  // phases 1-core (606) and 2-quantized (142) of candle 0.11.0
  size_t affine = 0, quantized = 0;
  for (const auto& x : s) {
    if (x.name == "affine_bf16") EXPECT_EQ(x.sizes, (std::vector<uint32_t>{8, 8, 8, 8, 8, 2, 2}));
    if (x.name == "get_rows_q4_0") EXPECT_EQ(x.sizes, (std::vector<uint32_t>{8, 8, 8, 8, 8}));
    if (x.name == "quantize_q8_1") EXPECT_EQ(x.sizes, (std::vector<uint32_t>{8, 8, 4, 4}));
    affine += x.module == "affine";
    quantized += x.module == "quantized" && x.phase == "2-quantized";
  }
  EXPECT_EQ(affine, 10u);
  EXPECT_EQ(quantized, 142u);
}

KernelMeta meta(int64_t vgpr, int64_t sgpr, int64_t wave, int64_t max_wg, int64_t lds) {
  KernelMeta k;
  k.vgpr_count = vgpr, k.sgpr_count = sgpr, k.wavefront_size = wave;
  k.max_flat_workgroup_size = max_wg, k.group_segment_fixed_size = lds;
  return k;
}

TEST(InventoryOccupancy, VgprLimitPerTarget) {
  // gfx906: 256 / align4(24) = 10.6 -> 10 (the maximum).
  Occupancy o = amdgpu_occupancy("gfx906", meta(24, 40, 64, 1024, 0));
  EXPECT_TRUE(o.known);
  EXPECT_EQ(o.max_waves, 10);
  EXPECT_EQ(o.waves, 10);
  // gfx908: 256 / align4(65)=68 -> 3.
  EXPECT_EQ(amdgpu_occupancy("gfx908:xnack-", meta(65, 40, 64, 256, 0)).vgpr_waves, 3);
  // gfx90a: 512 / align8(128) -> 4; 512 / align8(57)=64 -> 8 (the maximum).
  EXPECT_EQ(amdgpu_occupancy("gfx90a:sramecc+:xnack-", meta(128, 40, 64, 256, 0)).waves, 4);
  EXPECT_EQ(amdgpu_occupancy("gfx90a", meta(57, 40, 64, 256, 0)).waves, 8);
  EXPECT_EQ(amdgpu_occupancy("gfx940", meta(57, 40, 64, 256, 0)).max_waves, 8);
  // gfx1030 wave32: 1024 / align16(100)=112 -> 9; wave64: 512 / align8(100)=104 -> 4.
  EXPECT_EQ(amdgpu_occupancy("gfx1030", meta(100, 40, 32, 256, 0)).waves, 9);
  EXPECT_EQ(amdgpu_occupancy("gfx1030", meta(100, 40, 64, 256, 0)).waves, 4);
  EXPECT_EQ(amdgpu_occupancy("gfx1030", meta(8, 40, 32, 256, 0)).waves, 16);
  // gfx1010 wave32: 1024 / align8(100)=104 -> 9, maximum 20.
  EXPECT_EQ(amdgpu_occupancy("gfx1010", meta(100, 40, 32, 256, 0)).waves, 9);
  EXPECT_EQ(amdgpu_occupancy("gfx1010", meta(8, 40, 32, 256, 0)).waves, 20);
  // gfx1100 wave32: 1536 / align24(100)=120 -> 12.
  EXPECT_EQ(amdgpu_occupancy("gfx1100", meta(100, 40, 32, 256, 0)).waves, 12);
  EXPECT_FALSE(amdgpu_occupancy("gfx1200", meta(8, 40, 32, 256, 0)).known);
}

TEST(InventoryOccupancy, SgprAndLdsLimits) {
  // gfx9 SGPR table: 96 SGPRs -> 8 waves; gfx10 SGPRs do not limit.
  EXPECT_EQ(amdgpu_occupancy("gfx906", meta(8, 96, 64, 256, 0)).sgpr_waves, 8);
  EXPECT_EQ(amdgpu_occupancy("gfx906", meta(8, 102, 64, 256, 0)).waves, 7);
  EXPECT_EQ(amdgpu_occupancy("gfx1030", meta(8, 102, 32, 256, 0)).sgpr_waves, 16);
  // 32 KiB of LDS, 256-wide workgroups of wave64: 2 workgroups x 4 waves over 4 SIMDs -> 2.
  Occupancy o = amdgpu_occupancy("gfx90a", meta(16, 40, 64, 256, 32768));
  EXPECT_EQ(o.lds_waves, 2);
  EXPECT_EQ(o.waves, 2);
  EXPECT_TRUE(o.workgroup_fits);
  // 1 KiB: 64 workgroups -> capped at the maximum.
  EXPECT_EQ(amdgpu_occupancy("gfx906", meta(16, 40, 64, 256, 1024)).lds_waves, 10);
  // More LDS than a CU has: nothing fits.
  o = amdgpu_occupancy("gfx906", meta(16, 40, 64, 256, 65537));
  EXPECT_EQ(o.waves, 0);
  EXPECT_FALSE(o.workgroup_fits);
  // 1024-wide wave64 workgroup needs 4 waves per SIMD; 256 VGPRs allow 1.
  o = amdgpu_occupancy("gfx906", meta(256, 40, 64, 1024, 0));
  EXPECT_EQ(o.waves, 1);
  EXPECT_FALSE(o.workgroup_fits);
}

TEST(InventoryMsgpack, DecodesScalarsStringsArraysAndMaps) {
  // {"a": [1, -1, 300, "xy", true, nil], "b": 1.5 (float64)}
  const Bytes b{0x82, 0xa1, 'a', 0x96, 0x01, 0xff, 0xcd, 0x01, 0x2c, 0xa2, 'x', 'y', 0xc3,
                0xc0, 0xa1, 'b', 0xcb, 0x3f, 0xf8, 0,    0,    0,    0,    0,   0};
  msgpack::Value v;
  std::string err;
  ASSERT_TRUE(msgpack::decode(b.data(), b.size(), &v, &err)) << err;
  const msgpack::Value* a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->array.size(), 6u);
  EXPECT_EQ(a->array[0].u, 1u);
  EXPECT_EQ(a->array[1].i, -1);
  EXPECT_EQ(a->array[2].u, 300u);
  EXPECT_EQ(a->array[3].str, "xy");
  EXPECT_TRUE(a->array[4].b);
  EXPECT_EQ(a->array[5].type, msgpack::Value::Type::kNil);
  EXPECT_DOUBLE_EQ(v.find("b")->f, 1.5);
  for (size_t len = 0; len < b.size(); ++len) {
    EXPECT_FALSE(msgpack::decode(b.data(), len, &v, &err)) << "length " << len;
  }
}

TEST(InventoryMsgpack, RejectsHostileInputWithoutCrashing) {
  msgpack::Value v;
  std::string err;
  const Bytes deep(100000, 0x91);  // [[[[...]]]]: nesting is bounded, not recursed through
  EXPECT_FALSE(msgpack::decode(deep.data(), deep.size(), &v, &err));
  EXPECT_NE(err.find("nesting"), std::string::npos) << err;
  const Bytes huge_array{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01};  // claims 4G elements
  EXPECT_FALSE(msgpack::decode(huge_array.data(), huge_array.size(), &v, &err));
  const Bytes huge_map{0xdf, 0xff, 0xff, 0xff, 0xff};
  EXPECT_FALSE(msgpack::decode(huge_map.data(), huge_map.size(), &v, &err));
  const Bytes long_string{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'};
  EXPECT_FALSE(msgpack::decode(long_string.data(), long_string.size(), &v, &err));
  const Bytes reserved{0xc1};
  EXPECT_FALSE(msgpack::decode(reserved.data(), reserved.size(), &v, &err));
  const Bytes trailing{0x01, 0x02};
  EXPECT_FALSE(msgpack::decode(trailing.data(), trailing.size(), &v, &err));
}

}  // namespace

#endif  // HKB_INVENTORY_TEST_DATA
