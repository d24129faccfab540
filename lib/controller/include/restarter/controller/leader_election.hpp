#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: only
// the replica holding the Lease works; the others keep their caches warm and wait.
//
//   - A Lease is free when it does not exist, has no holder, or has not changed for
//     leaseDuration as observed on OUR monotonic clock (client-go's observedTime): the holder's
//     renewTime is only compared with itself, so clocks of different machines never need to agree,
//     and a step of this node's wall clock cannot make a live Lease look expired.
//   - The holder renews every retryPeriod; if it cannot renew for renewDeadline (monotonic time
//     since its last successful renewal), it has lost the Lease and must stop working at once
//     (renewDeadline < leaseDuration leaves the margin in which no one else can have taken over).
//   - acquireTime and renewTime, written into the Lease for people and other tools, are wall time
//     (metav1.MicroTime); nothing here reads them back as times.
//   - Updates carry the resourceVersion read, so two candidates never both win (Conflict).
//   - release() (on SIGTERM) clears the holder and sets leaseDurationSeconds to 1, so a standby
//     takes over within a retry period instead of a whole lease duration.
//
// Thread-safety: one thread drives an elector; its observation fields are that thread's alone.

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>

#include "restarter/base/clock.hpp"
#include "restarter/kube/client.hpp"
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

class LeaderElector {
 public:
  // `client`, `clock` and `logger` must outlive the elector.
  LeaderElector(kube::Client& client, LeaderElectionOptions options, base::Clock& clock, obs::Logger& logger);

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
  base::Clock& clock_;
  obs::Logger& logger_;
  // What we last saw of the Lease, and when (monotonic: only compared with later monotonic times).
  std::string observedHolder_;
  std::string observedRenewTime_;
  base::Clock::MonotonicTime observedAt_{};
  base::Clock::MonotonicTime lastRenewed_{};
  bool leader_ = false;
};

}  // namespace restarter::controller
