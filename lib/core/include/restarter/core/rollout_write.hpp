#pragma once
// The write of a rollout, shared by the controller's rollOut (lib/controller/src/workload.cpp) and
// `restarter roll` (lib/inspect/include/restarter/inspect/roll.hpp), so both send the same body under
// the same field manager (docs/architecture.md, "Annotation contract"):
//   one server-side apply with the kind's field manager (core::managedKind(kind).fieldManager) and
//   force, whose body holds only metadata.name/namespace/uid (the uid makes the apply fail instead
//   of re-creating a deleted workload), the metadata annotations last-rollout, content-digests,
//   baseline and queued-since (a rollout sends none, so it leaves the queue), and
//   spec.template.metadata.annotations with the desired restarter-owned keys;
//   then a JSON Patch, guarded by `test` operations, removing restarter keys another manager owns
//   that the desired annotations no longer hold (foreignLeftoverPatch).
// Pure functions.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/annotations.hpp"
#include "restarter/core/result.hpp"
#include "restarter/core/time.hpp"

namespace restarter::core {

// What one server-side apply sends. Every field the kind's manager owns must be sent again, or the
// apply removes it.
struct AppliedAnnotations {
  AnnotationMap templateAnnotations;       // the desired restarter-owned template keys
  std::optional<std::string> lastRollout;  // RFC 3339; nullopt: not sent
  std::string contentDigests;              // "": not sent
  std::optional<std::string> baseline;     // nullopt: not sent; "" empties a record another
                                           // manager wrote (the webhook's UPDATE patch)
  // kQueuedSinceAnnotation (RFC 3339); nullopt: not sent, so an apply removes the record this
  // manager wrote (a rollout leaves the fleet-wide queue; docs/behaviour.md, "Fleet-wide rollout
  // concurrency").
  std::optional<std::string> queuedSince;
};

// The apply body for a workload of API `apiVersion` and `kind` ("apps/v1", "Deployment").
nlohmann::json applyBody(std::string_view apiVersion, std::string_view kind, const nlohmann::json& workload,
                         const AppliedAnnotations& sent);

// The workload's metadata annotation `key`, if it is a string.
std::optional<std::string> metadataAnnotation(const nlohmann::json& workload, std::string_view key);

// The baseline to send: the desired one, or "" to empty a record that is there; nothing when
// there is none and none is wanted.
std::optional<std::string> baselineToSend(const nlohmann::json& workload, const DesiredAnnotations& desired);

// What a rollout sends: the desired template keys and records, last-rollout stamped `rolledAt`.
AppliedAnnotations rolloutAnnotations(const nlohmann::json& workload, const DesiredAnnotations& desired,
                                      TimePoint rolledAt);

// The guarded JSON Patch removing restarter keys of `applied` (the workload the apply returned)
// that `desired` no longer holds (another manager owns them, so the apply kept them); nullopt when
// there are none. `removed` (optional) receives the changes, for the log line.
Result<std::optional<nlohmann::json>> foreignLeftoverPatch(const nlohmann::json& applied,
                                                           const DesiredAnnotations& desired,
                                                           std::vector<AnnotationChange>* removed = nullptr);

}  // namespace restarter::core
