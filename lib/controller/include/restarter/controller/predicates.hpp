#pragma once
// The predicates of the controller's watch table (watches.hpp): which cache updates are worth a
// reconcile. A predicate sees the cached object before and after an update (slimmed, slim.hpp),
// holds no state and reads no other object: any thread may call it. Adds and deletes always
// queue; these only filter updates.

#include <string_view>

#include <nlohmann/json.hpp>

#include "restarter/cache/store.hpp"
#include "restarter/core/workload_kinds.hpp"

namespace restarter::controller {

// Whether metadata.<field> is the same (of any type, or absent) in both objects.
bool sameMetadata(const nlohmann::json& before, const nlohmann::json& after, std::string_view field);

// A workload update worth a reconcile: its template (generation), its ignore annotations or its
// template annotations changed. Status-only updates (a rollout in progress) are not.
bool workloadChanged(const cache::PackedPtr& before, const cache::PackedPtr& after);

// A workload update that finishes its rollout (core::rolloutProgressOf): a change held while that
// rollout was in progress may roll now (docs/architecture.md, "Rollouts rate-limited per workload").
// Status updates are otherwise no reason to reconcile; this one comes once per rollout.
bool rolloutFinished(core::WorkloadKind kind, const cache::PackedPtr& before, const cache::PackedPtr& after);

// A workload update worth a look by the OnDelete roll: anything but its resourceVersion (the
// slimmed object keeps only what the roll and the restarter read; status changes as pods come
// and go and become Ready).
bool rollInputChanged(const cache::PackedPtr& before, const cache::PackedPtr& after);

// A pod update worth a look by pod expiry: its annotations (expires-at) or its uid changed.
bool podChanged(const cache::ObjectPtr& before, const cache::ObjectPtr& after);

}  // namespace restarter::controller
