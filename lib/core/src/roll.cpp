#include "restarter/core/roll.hpp"

#include <algorithm>

#include "restarter/base/rfc3339.hpp"

namespace restarter::core {

namespace {

// Roll order (roll.hpp): StatefulSet highest ordinal first, DaemonSet by node; the name breaks ties
// so the order never depends on the list's order.
void sortInRollOrder(std::vector<RollPod>& pods, WorkloadKind kind) {
  std::sort(pods.begin(), pods.end(), [kind](const RollPod& a, const RollPod& b) {
    if (kind == WorkloadKind::StatefulSet && a.ordinal != b.ordinal) return a.ordinal > b.ordinal;
    if (kind == WorkloadKind::DaemonSet && a.node != b.node) return a.node < b.node;
    return a.name < b.name;
  });
}

// Ready for at least minReadySeconds. A Ready pod whose transition time is unknown counts as
// available: nothing says it is not, and waiting for an unknown time would stall the roll.
bool available(const RollPod& pod, std::chrono::seconds minReady, TimePoint now) {
  if (!pod.ready || pod.terminating) return false;
  return minReady.count() == 0 || !pod.since || now - *pod.since >= minReady;
}

std::string secondsText(std::chrono::seconds s) { return formatDuration(s); }

}  // namespace

const char* rollStateName(RollDecision::State state) noexcept {
  switch (state) {
    case RollDecision::State::KubernetesRolls: return "kubernetes-rolls";
    case RollDecision::State::Partitioned: return "partitioned";
    case RollDecision::State::Stale: return "waiting-for-status";
    case RollDecision::State::Manual: return "manual";
    case RollDecision::State::Done: return "done";
    case RollDecision::State::Rolling: return "rolling";
    case RollDecision::State::Paused: return "paused";
  }
  return "unknown";
}

RollDecision decideRoll(const RollWorkload& workload, std::vector<RollPod> pods, TimePoint now,
                        std::chrono::seconds readyTimeout) {
  using State = RollDecision::State;
  RollDecision decision;
  sortInRollOrder(pods, workload.kind);
  const bool known = workload.statusCurrent && !workload.updateRevision.empty();
  if (known) {
    for (const RollPod& pod : pods) {
      if (!pod.terminating && pod.revision != workload.updateRevision) decision.outdated.push_back(pod.name);
    }
  }

  if (workload.strategy == UpdateStrategy::RollingUpdate) {
    decision.state = State::KubernetesRolls;
    decision.reason = "updateStrategy RollingUpdate: the workload's own controller replaces the pods";
    if (workload.kind == WorkloadKind::StatefulSet && workload.partition > 0 && known) {
      for (const RollPod& pod : pods) {
        if (!pod.terminating && pod.revision != workload.updateRevision && pod.ordinal >= 0 &&
            pod.ordinal < workload.partition) {
          decision.kept.push_back(pod.name);
        }
      }
      if (!decision.kept.empty()) {
        decision.state = State::Partitioned;
        decision.reason = "rollingUpdate.partition " + std::to_string(workload.partition) +
                          " keeps pods with a lower ordinal on their revision";
      }
    }
    return decision;
  }
  if (!known) {
    decision.state = State::Stale;
    decision.reason = "waiting for the workload's status to describe its current template";
    return decision;
  }
  if (workload.manual) {
    decision.state = State::Manual;
    decision.reason = "opted out (restarter.stackable.tech/ondelete: manual): pods are replaced by hand";
    return decision;
  }
  if (decision.outdated.empty()) {
    decision.state = State::Done;
    return decision;
  }

  decision.state = State::Rolling;
  int running = 0;
  for (const RollPod& pod : pods) {
    if (pod.terminating) {
      decision.reason = "pod " + pod.name + " is terminating; waiting for its replacement";
      decision.blockingPod = pod.name;
      return decision;
    }
    ++running;
  }
  if (running != workload.desired) {
    decision.reason = std::to_string(running) + " pods exist, " + std::to_string(workload.desired) +
                      " desired; waiting for the workload controller";
    return decision;
  }
  // 2. and 3.: the replacements come first.
  for (const RollPod& pod : pods) {
    if (pod.revision != workload.updateRevision || pod.ready) continue;
    decision.blockingPod = pod.name;
    if (pod.since && now - *pod.since >= readyTimeout) {
      decision.state = State::Paused;
      decision.reason = "pod " + pod.name + " on the update revision is not Ready after " +
                        secondsText(readyTimeout) + " (not Ready since " + base::formatRfc3339(*pod.since) +
                        "); nothing else is evicted until it is Ready or the template changes";
      return decision;
    }
    decision.reason = "waiting for pod " + pod.name + " to become Ready";
    if (pod.since) decision.recheckAt = *pod.since + readyTimeout;
    return decision;
  }
  for (const RollPod& pod : pods) {
    if (pod.revision != workload.updateRevision || available(pod, workload.minReadySeconds, now)) continue;
    decision.blockingPod = pod.name;
    decision.reason = "waiting for pod " + pod.name + " to be Ready for minReadySeconds (" +
                      secondsText(workload.minReadySeconds) + ")";
    decision.recheckAt = *pod.since + workload.minReadySeconds;  // available() is false only with since
    return decision;
  }
  // 4. and 5.
  for (const RollPod& pod : pods) {
    if (pod.revision != workload.updateRevision && !available(pod, workload.minReadySeconds, now)) {
      decision.evict = pod.name;
      return decision;
    }
  }
  decision.evict = decision.outdated.front();
  return decision;
}

}  // namespace restarter::core
