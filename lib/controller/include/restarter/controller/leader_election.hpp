#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: only
// the replica holding the Lease works; the others keep their caches warm and wait.
//
//   - A Lease is free when it does not exist, has no holder, or has not changed for
//     leaseDuration as observed by OUR clock (the holder's renewTime is only compared with itself,
//     so clocks of different machines never need to agree).
//   - The holder renews every retryPeriod; if it cannot renew for renewDeadline, it has lost the
//     Lease and must stop working at once (renewDeadline < leaseDuration leaves the margin in
//     which no one else can have taken over).
//   - Updates carry the resourceVersion read, so two candidates never both win (Conflict).
//   - release() (on SIGTERM) clears the holder and sets leaseDurationSeconds to 1, so a standby
//     takes over within a retry period instead of a whole lease duration.
//
// Thread-safety: one thread drives an elector.

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>

#include "restarter/kube/client.hpp"
#include "restarter/kube/clock.hpp"
#include "restarter/obs/log.hpp"

namespace restarter::controller {

struct LeaderElectionOptions {
  std::string namespace_;
  std::string name = "restarter-controller";
  std::string identity;
  // client-go's defaults (15 s / 10 s / 2 s).
  std::chrono::seconds leaseDuration{15};
  std::chrono::seconds renewDeadline{10};
  std::chrono::seconds retryPeriod{2};
};

// The timeout for each Lease request (connection included): min(retryPeriod, renewDeadline / 4),
// 2 s with the defaults. hold() notices a failed renewal only when its attempt returns, and an
// attempt is a GET and a PUT, so a holder keeps working at most renewDeadline + 2 x this after
// its last successful renewal (14 s), which must stay below leaseDuration (15 s), after which a
// standby may take over. With a transport's default timeout (60 s) a hung apiserver would keep
// two leaders working at once.
std::chrono::milliseconds leaseRequestTimeout(const LeaderElectionOptions& options);

// RFC 3339 with exactly six fraction digits (metav1.MicroTime's wire format).
std::string formatMicroTime(kube::Clock::TimePoint time);

class LeaderElector {
 public:
  // `client`, `clock` and `logger` must outlive the elector.
  LeaderElector(kube::Client& client, LeaderElectionOptions options, kube::Clock& clock, obs::Logger& logger);

  // One attempt to acquire or renew. True when we hold the Lease afterwards.
  bool tryAcquireOrRenew();
  // Retries every retryPeriod until the Lease is ours (true) or `stop` (false).
  bool acquire(std::stop_token stop);
  // Renews every retryPeriod until `stop` (true: still the leader) or until renewal has failed
  // for renewDeadline (false: lost; stop working now).
  bool hold(std::stop_token stop);
  // Gives the Lease up if we hold it. Best effort: errors are logged.
  void release();

  const LeaderElectionOptions& options() const { return options_; }

 private:
  kube::Client& client_;
  LeaderElectionOptions options_;
  kube::Clock& clock_;
  obs::Logger& logger_;
  // What we last saw of the Lease, and when (by our clock).
  std::string observedHolder_;
  std::string observedRenewTime_;
  kube::Clock::TimePoint observedAt_{};
  kube::Clock::TimePoint lastRenewed_{};
  bool leader_ = false;
};

}  // namespace restarter::controller
