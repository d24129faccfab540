#pragma once
// Reads the roll's inputs (roll.hpp) from API objects: the workload, its pods, and for DaemonSets
// its ControllerRevisions. Pure and non-throwing: every object comes from the API, so a field of
// the wrong type is an InvalidInput error naming its path, never a crash. The controller (from
// fresh lists) and explain-restart (from its GETs) both read through these, so they agree.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/result.hpp"
#include "restarter/core/roll.hpp"

namespace restarter::core {

// The pod label every StatefulSet and DaemonSet pod carries: its revision.
inline constexpr std::string_view kRevisionHashLabel = "controller-revision-hash";

// A StatefulSet or DaemonSet. `daemonSetRevision` is the DaemonSet's current revision
// (daemonSetRevisionHash); ignored for StatefulSets, whose status.updateRevision says it.
// Defaults as the apiserver's: updateStrategy RollingUpdate, replicas 1, partition 0.
Result<RollWorkload> rollWorkloadFromJson(const nlohmann::json& workload, WorkloadKind kind,
                                          std::string_view daemonSetRevision = {});

// A pod; `kind` decides whether the name's numeric suffix is an ordinal.
Result<RollPod> rollPodFromJson(const nlohmann::json& pod, WorkloadKind kind);

// The label selector of the workload's pods, "k1=v1,k2=v2" from spec.selector.matchLabels ("" when
// there are none: list all pods of the namespace and keep those controlledBy the workload).
std::string podSelector(const nlohmann::json& workload);

// Whether metadata.ownerReferences names `uid` as controller.
bool controlledBy(const nlohmann::json& object, std::string_view uid);

// The controller-revision-hash of the newest (highest `revision`) of `revisions`
// (ControllerRevisions) that `uid` controls: the DaemonSet's current revision, the label its
// up-to-date pods carry. "" when none.
std::string daemonSetRevisionHash(const std::vector<nlohmann::json>& revisions, std::string_view uid);

}  // namespace restarter::core
