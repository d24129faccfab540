#include "restarter/controller/leader_election.hpp"

#include <algorithm>

#include "restarter/base/rfc3339.hpp"

namespace restarter::controller {

namespace {

// metav1.MicroTime's wire format: RFC 3339 with exactly six fraction digits.
std::string leaseMicroTime(base::Clock::WallTime time) {
  return base::formatRfc3339(std::chrono::floor<std::chrono::microseconds>(time), base::Fraction::Micros);
}

}  // namespace

std::chrono::milliseconds leaseRequestTimeout(const LeaderElectionOptions& options) {
  return std::min(std::chrono::duration_cast<std::chrono::milliseconds>(options.retryPeriod),
                  std::chrono::duration_cast<std::chrono::milliseconds>(options.renewDeadline) / 4);
}

LeaderElector::LeaderElector(kube::Client& client, LeaderElectionOptions options, base::Clock& clock,
                             obs::Logger& logger)
    : client_(client), options_(std::move(options)), clock_(clock), logger_(logger) {}

bool LeaderElector::tryAcquireOrRenew() {
  // Monotonic for every judgement of elapsed time; wall only for the timestamps written.
  const auto now = clock_.monotonicNow();
  const std::string nowText = leaseMicroTime(clock_.wallNow());
  auto current = client_.getLease(options_.namespace_, options_.name);
  if (!current) {
    if (current.error().kind != core::ErrorKind::NotFound) {
      logger_.warn("cannot read leader election lease", {{"lease", options_.namespace_ + "/" + options_.name},
                                                         {"error", current.error().describe()}});
      leader_ = false;
      return false;
    }
    kube::LeaseRecord lease;
    lease.name = options_.name;
    lease.namespace_ = options_.namespace_;
    lease.holderIdentity = options_.identity;
    lease.leaseDurationSeconds = options_.leaseDuration.count();
    lease.acquireTime = nowText;
    lease.renewTime = nowText;
    auto created = client_.createLease(lease);
    leader_ = created.ok();
    if (leader_) lastRenewed_ = now;
    return leader_;
  }
  kube::LeaseRecord lease = std::move(current).value();
  if (lease.holderIdentity != observedHolder_ || lease.renewTime != observedRenewTime_) {
    observedHolder_ = lease.holderIdentity;
    observedRenewTime_ = lease.renewTime;
    observedAt_ = now;
  }
  const bool ours = lease.holderIdentity == options_.identity;
  const auto duration = std::chrono::seconds(lease.leaseDurationSeconds > 0 ? lease.leaseDurationSeconds
                                                                            : options_.leaseDuration.count());
  const bool expired = now >= observedAt_ + duration;
  if (!ours && !lease.holderIdentity.empty() && !expired) {
    leader_ = false;
    return false;
  }
  if (!ours) {
    lease.leaseTransitions += 1;
    lease.acquireTime = nowText;
  }
  lease.holderIdentity = options_.identity;
  lease.leaseDurationSeconds = options_.leaseDuration.count();
  lease.renewTime = nowText;
  auto updated = client_.updateLease(lease);
  if (!updated) {
    if (updated.error().kind != core::ErrorKind::Conflict) {
      logger_.warn("cannot update leader election lease", {{"lease", options_.namespace_ + "/" + options_.name},
                                                           {"error", updated.error().describe()}});
    }
    leader_ = false;
    return false;
  }
  observedHolder_ = updated->holderIdentity;
  observedRenewTime_ = updated->renewTime;
  observedAt_ = now;
  lastRenewed_ = now;
  leader_ = true;
  return true;
}

bool LeaderElector::acquire(std::stop_token stop) {
  bool announced = false;
  while (!stop.stop_requested()) {
    if (tryAcquireOrRenew()) {
      logger_.info("became leader",
                   {{"lease", options_.namespace_ + "/" + options_.name}, {"identity", options_.identity}});
      return true;
    }
    if (!announced) {
      logger_.info("waiting for leadership", {{"lease", options_.namespace_ + "/" + options_.name},
                                              {"holder", observedHolder_},
                                              {"identity", options_.identity}});
      announced = true;
    }
    if (!clock_.waitFor(std::chrono::duration_cast<std::chrono::milliseconds>(options_.retryPeriod), stop))
      break;
  }
  return false;
}

bool LeaderElector::hold(std::stop_token stop) {
  while (clock_.waitFor(std::chrono::duration_cast<std::chrono::milliseconds>(options_.retryPeriod), stop)) {
    if (tryAcquireOrRenew()) continue;
    const bool takenOver = !observedHolder_.empty() && observedHolder_ != options_.identity;
    if (takenOver || clock_.monotonicNow() >= lastRenewed_ + options_.renewDeadline) {
      logger_.error("leadership lost",
                    {{"lease", options_.namespace_ + "/" + options_.name}, {"holder", observedHolder_}});
      return false;
    }
  }
  return true;
}

void LeaderElector::release() {
  auto current = client_.getLease(options_.namespace_, options_.name);
  if (!current || current->holderIdentity != options_.identity) return;
  kube::LeaseRecord lease = std::move(current).value();
  lease.holderIdentity.clear();
  lease.leaseDurationSeconds = 1;
  lease.renewTime = leaseMicroTime(clock_.wallNow());
  auto updated = client_.updateLease(lease);
  if (!updated) {
    logger_.warn("cannot release leader election lease",
                 {{"lease", options_.namespace_ + "/" + options_.name}, {"error", updated.error().describe()}});
    return;
  }
  leader_ = false;
  logger_.info("released leadership", {{"lease", options_.namespace_ + "/" + options_.name}});
}

}  // namespace restarter::controller
