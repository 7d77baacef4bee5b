// A context's life gate: operations that use the runtime for a context hold it shared, shutdown
// and the multiprocessor-count rewrite hold it exclusively.
#pragma once

#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <thread>

namespace hkb::detail {

// SharedLockable (std::shared_lock / std::unique_lock take it). A shared holder only counts
// itself in and checks that no exclusive holder is in: no lock on the launch path. An exclusive
// holder takes the mutex (so exclusive holders queue), closes the gate, then waits for the shared
// holders in flight to leave; shared holders that found it closed wait on the mutex and retry.
// Both sides' announcement and check are sequentially consistent, so at least one of them sees
// the other.
class LifeGate {
 public:
  void lock_shared() noexcept {
    for (;;) {
      shared_.fetch_add(1, std::memory_order_seq_cst);
      if (!closed_.load(std::memory_order_seq_cst)) return;
      shared_.fetch_sub(1, std::memory_order_release);
      std::shared_lock<std::shared_mutex> wait(mu_);  // until the exclusive holder leaves
    }
  }
  void unlock_shared() noexcept { shared_.fetch_sub(1, std::memory_order_release); }

  void lock() {
    mu_.lock();
    closed_.store(true, std::memory_order_seq_cst);
    while (shared_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  }
  void unlock() noexcept {
    closed_.store(false, std::memory_order_seq_cst);
    mu_.unlock();
  }

 private:
  std::atomic<uint32_t> shared_{0};
  std::atomic<bool> closed_{false};
  std::shared_mutex mu_;
};

}  // namespace hkb::detail
