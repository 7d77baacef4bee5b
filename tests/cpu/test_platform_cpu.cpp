// The CPU platform's own contract (kernels/common/platform_cpu.h), with small kernels compiled
// here for one wave width (this file is built once per width). A kernel that breaks the contract
// must fail its launch with a message that says how, never return a value.
#include <gtest/gtest.h>

#include "common/platform.h"

#include <string>
#include <vector>

namespace {

constexpr int kW = HKB_WAVE_SIZE;

struct Launch {
  int rc;
  std::string error;
};

// Runs a kernel's parameter unpacker over one block of `threads` threads.
Launch run(void (*invoke)(void**), uint32_t threads, void** params) {
  const uint32_t grid[3] = {1, 1, 1}, block[3] = {threads, 1, 1};
  char err[512] = {};
  const int rc = hkb_cpu::launch(invoke, grid, block, 0, params, err, sizeof err);
  return {rc, err};
}

// Sum over the wave by xor shuffles: every lane takes part.
__global__ void wave_sum(float* out) {
  float v = static_cast<float>(hkb::lane_id() + 1);
  for (int m = kW / 2; m > 0; m >>= 1) v += hkb::shfl_xor(v, m, kW);
  out[threadIdx.x] = v;
}
void wave_sum_entry(void** p) {
  hkb_cpu::call(&wave_sum, p);
}

// The last lane exits; its neighbour then reads it.
__global__ void read_exited(float* out) {
  if (hkb::lane_id() == kW - 1) return;
  out[threadIdx.x] = hkb::shfl_xor(1.0f, 1, kW);
}
void read_exited_entry(void** p) {
  hkb_cpu::call(&read_exited, p);
}

// The low half of the wave reads the high half, which waits at the barrier.
__global__ void read_at_barrier(float* out) {
  float v = 1.0f;
  if (hkb::lane_id() < kW / 2) v = hkb::shfl_xor(v, kW / 2, kW);
  __syncthreads();
  out[threadIdx.x] = v;
}
void read_at_barrier_entry(void** p) {
  hkb_cpu::call(&read_at_barrier, p);
}

// Odd lanes shuffle at one call, even lanes at another, and each reads the other kind.
__global__ void read_divergent(float* out) {
  float v = static_cast<float>(hkb::lane_id());
  if (hkb::lane_id() & 1)
    v = hkb::shfl_xor(v, 1, kW);
  else
    v = hkb::shfl_down(v, 1, kW) + 1.0f;
  out[threadIdx.x] = v;
}
void read_divergent_entry(void** p) {
  hkb_cpu::call(&read_divergent, p);
}

// Divergent but legal: odd lanes exchange among themselves, then all lanes reconverge.
__global__ void divergent_within(float* out) {
  float v = static_cast<float>(hkb::lane_id());
  if (hkb::lane_id() & 1) v = hkb::shfl_xor(v, 2, kW);
  out[threadIdx.x] = hkb::shfl_xor(v, 1, kW);
}
void divergent_within_entry(void** p) {
  hkb_cpu::call(&divergent_within, p);
}

// A block of half a wave: the lanes past it do not exist.
__global__ void read_absent(float* out) {
  out[threadIdx.x] = hkb::shfl_xor(1.0f, kW / 2, kW);
}
void read_absent_entry(void** p) {
  hkb_cpu::call(&read_absent, p);
}

class CpuPlatform : public ::testing::Test {
 protected:
  std::vector<float> out = std::vector<float>(1024, -1.0f);
  float* out_ptr = out.data();
  void* params[1] = {&out_ptr};
};

TEST_F(CpuPlatform, ConvergedShufflesSumTheWave) {
  const Launch l = run(&wave_sum_entry, 2 * kW, params);
  ASSERT_EQ(l.rc, 0) << l.error;
  for (int t = 0; t < 2 * kW; ++t) EXPECT_EQ(out[t], kW * (kW + 1) / 2.0f) << "thread " << t;
}

TEST_F(CpuPlatform, ReadingAnExitedLaneFails) {
  const Launch l = run(&read_exited_entry, kW, params);
  EXPECT_NE(l.rc, 0);
  EXPECT_NE(l.error.find("reads lane " + std::to_string(kW - 1)), std::string::npos) << l.error;
  EXPECT_NE(l.error.find("has exited"), std::string::npos) << l.error;
}

TEST_F(CpuPlatform, ReadingALaneAtTheBarrierFails) {
  const Launch l = run(&read_at_barrier_entry, kW, params);
  EXPECT_NE(l.rc, 0);
  EXPECT_NE(l.error.find("waits at __syncthreads"), std::string::npos) << l.error;
}

TEST_F(CpuPlatform, ReadingALaneAtAnotherOperationFails) {
  const Launch l = run(&read_divergent_entry, kW, params);
  EXPECT_NE(l.rc, 0);
  EXPECT_NE(l.error.find("another cross-lane operation"), std::string::npos) << l.error;
}

TEST_F(CpuPlatform, DivergentLanesThatReadOnlyEachOtherReconverge) {
  const Launch l = run(&divergent_within_entry, kW, params);
  ASSERT_EQ(l.rc, 0) << l.error;
  for (int t = 0; t < kW; ++t) {
    // Odd lane t holds t ^ 2 after the first exchange; every lane then reads its neighbour.
    const int n = t ^ 1;
    const float want = static_cast<float>((n & 1) ? (n ^ 2) : n);
    EXPECT_EQ(out[t], want) << "thread " << t;
  }
}

TEST_F(CpuPlatform, ReadingALanePastTheBlockFails) {
  const Launch l = run(&read_absent_entry, kW / 2, params);
  EXPECT_NE(l.rc, 0);
  EXPECT_NE(l.error.find("does not exist"), std::string::npos) << l.error;
}

// byte_float (platform.h) through this platform's v_perm_b32, and NVIDIA's PRMT selectors through
// its __byte_perm: byte k of a word whatever its other bytes, as 0.5 + byte / 256 (values below
// 128) or 0.5 + byte / 65536, exactly.
TEST(CpuPlatformBytes, ByteFloatsFromBytePermutes) {
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 0; k < 4; ++k) {
      const uint32_t w = (b << (8 * k)) | (0xA5C3E1F7u & ~(0xFFu << (8 * k)));
      const float f7 = 0.5f + b / 256.0f, f8 = 0.5f + b / 65536.0f;
      if (b < 128) {
        EXPECT_EQ(hkb::byte_float<7>(w, k), f7) << b << " " << k;
        EXPECT_EQ(__uint_as_float(__byte_perm(w, 0x3Fu, hkb::byte_float_prmt(7, k))), f7);
      }
      EXPECT_EQ(hkb::byte_float<8>(w, k), f8) << b << " " << k;
      EXPECT_EQ(__uint_as_float(__byte_perm(w, 0x3Fu, hkb::byte_float_prmt(8, k))), f8);
    }
  }
}

}  // namespace
