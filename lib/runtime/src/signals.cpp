#include "restarter/runtime/signals.hpp"

#include <ctime>
#include <utility>

namespace restarter::runtime {

SignalWaiter::SignalWaiter(std::stop_source source, obs::Logger& logger, std::function<void()> tick,
                           std::chrono::milliseconds period) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  thread_ = std::thread([this, source, &logger, tick = std::move(tick), period]() mutable {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(period);
    const timespec wait{static_cast<time_t>(seconds.count()),
                        static_cast<long>(std::chrono::nanoseconds(period - seconds).count())};
    while (!done_) {
      if (tick) tick();
      const int signal = sigtimedwait(&set_, nullptr, &wait);
      if ((signal == SIGINT || signal == SIGTERM) && !done_) {
        if (received_ == 0) {
          logger.info("signal received; shutting down", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
          received_ = signal;
        }
        source.request_stop();
      }
    }
  });
}

SignalWaiter::~SignalWaiter() {
  done_ = true;
  pthread_kill(thread_.native_handle(), SIGTERM);  // wakes sigtimedwait (blocked, so not delivered)
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace restarter::runtime
