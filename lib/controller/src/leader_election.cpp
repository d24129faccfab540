#include "restarter/controller/leader_election.hpp"

#include <algorithm>
#include <cstdio>

namespace restarter::controller {

std::chrono::milliseconds leaseRequestTimeout(const LeaderElectionOptions& options) {
  return std::min(std::chrono::duration_cast<std::chrono::milliseconds>(options.retryPeriod),
                  std::chrono::duration_cast<std::chrono::milliseconds>(options.renewDeadline) / 4);
}

std::string formatMicroTime(kube::Clock::TimePoint time) {
  const auto micros = std::chrono::time_point_cast<std::chrono::microseconds>(time);
  const auto seconds = std::chrono::time_point_cast<std::chrono::seconds>(micros);
  const auto fraction = (micros - seconds).count();
  const std::chrono::year_month_day date{std::chrono::floor<std::chrono::days>(seconds)};
  const std::chrono::hh_mm_ss clock{seconds - std::chrono::floor<std::chrono::days>(seconds)};
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02lld.%06lldZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
                static_cast<long long>(clock.seconds().count()), static_cast<long long>(fraction));
  return buffer;
}

LeaderElector::LeaderElector(kube::Client& client, LeaderElectionOptions options, kube::Clock& clock,
                             obs::Logger& logger)
    : client_(client), options_(std::move(options)), clock_(clock), logger_(logger) {}

bool LeaderElector::tryAcquireOrRenew() {
  const auto now = clock_.now();
  const std::string nowText = formatMicroTime(now);
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
    if (takenOver || clock_.now() >= lastRenewed_ + options_.renewDeadline) {
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
  lease.renewTime = formatMicroTime(clock_.now());
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
