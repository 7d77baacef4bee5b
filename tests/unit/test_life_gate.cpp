// The context's life gate (loader/life_gate.hpp): exclusive holders exclude shared ones and wait
// for those in flight; shared holders run side by side.
#include "life_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace {

using hkb::detail::LifeGate;

// Writers keep a == b outside their exclusive sections and break it inside; readers under the
// shared gate must never see them differ.
TEST(LifeGate, SharedHoldersNeverSeeAnExclusiveSectionHalfDone) {
  LifeGate gate;
  std::atomic<int> a{0}, b{0};
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, torn{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        std::shared_lock<LifeGate> hold(gate);
        const int x = a.load(std::memory_order_relaxed);
        std::this_thread::yield();
        if (b.load(std::memory_order_relaxed) != x) torn.fetch_add(1);
        reads.fetch_add(1);
      }
    });
  }
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&] {
      for (int i = 0; i < 300; ++i) {
        std::unique_lock<LifeGate> hold(gate);
        a.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::yield();
        b.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  threads[4].join();
  threads[5].join();
  stop.store(true);
  for (int r = 0; r < 4; ++r) threads[r].join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(a.load(), 600);
  EXPECT_EQ(b.load(), 600);
  EXPECT_GT(reads.load(), 0);
}

// An exclusive holder waits for a shared holder already in; a shared holder arriving meanwhile
// waits for the exclusive one to leave.
TEST(LifeGate, ExclusiveWaitsForSharedInFlightAndBlocksNewOnes) {
  LifeGate gate;
  std::atomic<int> stage{0};
  gate.lock_shared();
  std::thread writer([&] {
    gate.lock();
    stage.store(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stage.store(2);
    gate.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(stage.load(), 0) << "the exclusive holder entered while a shared one was in";
  gate.unlock_shared();
  while (stage.load() == 0) std::this_thread::yield();
  gate.lock_shared();  // arrives while the writer is in: enters only after it leaves
  EXPECT_EQ(stage.load(), 2);
  gate.unlock_shared();
  writer.join();
}

// Shared holders do not exclude each other.
TEST(LifeGate, SharedHoldersRunTogether) {
  LifeGate gate;
  std::shared_lock<LifeGate> first(gate);
  std::atomic<bool> entered{false};
  std::thread other([&] {
    std::shared_lock<LifeGate> second(gate);
    entered.store(true);
  });
  other.join();
  EXPECT_TRUE(entered.load());
}

}  // namespace
