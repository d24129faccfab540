#include "restarter/base/random.hpp"

#include <mutex>
#include <random>

namespace restarter::base {
namespace {

// One engine, one lock (the lock guards the engine and the distribution's state).
class SystemRandom final : public Random {
 public:
  double uniform() override {
    std::lock_guard lock(mutex_);
    return distribution_(engine_);
  }

 private:
  std::mutex mutex_;
  std::mt19937_64 engine_{std::random_device{}()};
  std::uniform_real_distribution<double> distribution_{0.0, 1.0};
};

}  // namespace

Random& systemRandom() {
  static SystemRandom random;
  return random;
}

}  // namespace restarter::base
