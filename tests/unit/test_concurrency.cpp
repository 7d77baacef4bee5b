// hkb_shutdown racing everything else through the C ABI (hkb.h: every function may be called
// from any thread): lookups, first loads, launches on streams, stream creation and destruction.
// Each call must return HKB_SUCCESS or HKB_ERROR_SHUT_DOWN; under ASan and TSan (CI's sanitizer
// jobs) no use after free and no data race may happen.
#include "c_api.hpp"
#include "fake_runtime.hpp"

#include <gtest/gtest.h>
#include <hkb/hkb.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

bool ok_or_shut_down(hkb_status s) {
  return s == HKB_SUCCESS || s == HKB_ERROR_SHUT_DOWN;
}

// One worker: lookups (the first of each is a module load), a stream per round, launches on it
// and on the null stream, and the stream's destruction.
void worker(hkb_context ctx, int id, std::atomic<bool>* go, std::atomic<int>* bad,
            std::string* why) {
  while (!go->load()) std::this_thread::yield();
  const char* names[] = {"fill_u8", "fill_f64", "affine_f32", "affine_bf16"};
  auto expect = [&](hkb_status s, const char* what) {
    if (ok_or_shut_down(s)) return true;
    if (bad->fetch_add(1) == 0) *why = std::string(what) + ": " + hkb_status_string(s);
    return false;
  };
  for (int round = 0; round < 50; ++round) {
    hkb_function fn = nullptr;
    const hkb_status got = hkb_function_get(ctx, names[(id + round) % 4], &fn);
    if (!expect(got, "hkb_function_get") || got != HKB_SUCCESS) return;
    hkb_stream stream = nullptr;
    const hkb_status made = hkb_stream_create(ctx, &stream);
    if (!expect(made, "hkb_stream_create")) return;
    const size_t n = hkb_function_num_params(fn);
    std::vector<uint64_t> storage(n, 0);
    std::vector<void*> args(n);
    std::vector<size_t> sizes(n);
    for (size_t i = 0; i < n; ++i) args[i] = &storage[i], sizes[i] = hkb_function_param_size(fn, i);
    const hkb_launch_config cfg = hkb_launch_config_for_num_elems(64);
    expect(
        hkb_launch(fn, &cfg, made == HKB_SUCCESS ? stream : nullptr, args.data(), sizes.data(), n),
        "hkb_launch");
    expect(hkb_launch(fn, &cfg, nullptr, args.data(), sizes.data(), n), "hkb_launch");
    if (made == HKB_SUCCESS) {
      expect(hkb_stream_synchronize(stream), "hkb_stream_synchronize");
      expect(hkb_stream_destroy(stream), "hkb_stream_destroy");
    }
  }
}

TEST(Concurrency, ShutdownRacesLookupsLaunchesStreamsAndFirstLoads) {
  for (int trial = 0; trial < 8; ++trial) {
    fake::State state;
    hkb::detail::install_library(fake::make_library(&state));
    hkb_context ctx = nullptr;
    ASSERT_EQ(hkb_context_get(0, &ctx), HKB_SUCCESS) << hkb_last_error();
    std::atomic<bool> go{false};
    std::atomic<int> bad{0};
    std::string why;
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t) threads.emplace_back(worker, ctx, t, &go, &bad, &why);
    go = true;
    // Shut down after a varying head start, so that every phase of the workers gets hit.
    std::this_thread::sleep_for(std::chrono::microseconds(200 * trial));
    EXPECT_EQ(hkb_shutdown(), HKB_SUCCESS);
    for (auto& th : threads) th.join();
    EXPECT_EQ(bad.load(), 0) << why;
    hkb_function fn = nullptr;
    EXPECT_EQ(hkb_function_get(ctx, "fill_u8", &fn), HKB_ERROR_SHUT_DOWN);
    EXPECT_EQ(hkb_stream_create(ctx, nullptr), HKB_ERROR_SHUT_DOWN);
  }
}

TEST(Concurrency, ContextsMadeWhileShuttingDownAreDeadToo) {
  for (int trial = 0; trial < 8; ++trial) {
    fake::State state;
    state.devices = 4;
    state.targets = {"gfx90a", "gfx90a", "gfx90a", "gfx90a"};
    auto lib = fake::make_library(&state);
    std::vector<std::thread> threads;
    std::vector<hkb_context_s*> got(4, nullptr);
    for (int d = 0; d < 4; ++d) {
      threads.emplace_back([&, d] { (void)lib->context(d, &got[d]); });
    }
    lib->shutdown();
    for (auto& th : threads) th.join();
    for (int d = 0; d < 4; ++d) {
      if (got[d] == nullptr) continue;
      hkb_function_s* fn = nullptr;
      EXPECT_EQ(lib->function(got[d], "fill_u8", &fn).code, HKB_ERROR_SHUT_DOWN) << d;
    }
  }
}

}  // namespace
