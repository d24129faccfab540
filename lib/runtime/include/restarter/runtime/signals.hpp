#pragma once
// SIGINT and SIGTERM for a long-running process, taken on one thread of its own.

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stop_token>
#include <thread>

#include "restarter/obs/log.hpp"

namespace restarter::runtime {

// Blocks SIGINT and SIGTERM in the constructing thread, so in every thread started after it
// (construct it before any other thread), and takes them on a thread of its own: the first one is
// logged ("signal received; shutting down") and requests stop on `source`. `tick`, when given,
// runs on that thread every `period` until destruction (e.g. returning free memory). The
// destructor wakes and joins the thread and restores the previous mask. `logger` must outlive it.
class SignalWaiter {
 public:
  SignalWaiter(std::stop_source source, obs::Logger& logger, std::function<void()> tick = {},
               std::chrono::milliseconds period = std::chrono::milliseconds(200));
  ~SignalWaiter();
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;

  int received() const { return received_; }  // the signal taken, 0 while none

 private:
  sigset_t set_{};
  sigset_t previous_{};
  std::atomic<bool> done_{false};
  std::atomic<int> received_{0};
  std::thread thread_;
};

}  // namespace restarter::runtime
