#pragma once
// Recording the controller's events.k8s.io Events: one helper, so every Event carries the same
// reporting controller and instance and a failure is handled one way.

#include <string>

#include <nlohmann/json.hpp>

#include "restarter/controller/reconcile.hpp"
#include "restarter/kube/client.hpp"

namespace restarter::controller {

// The reference to an object read from the API (apiVersion and kind given; namespace, name and
// uid from its metadata, "" when absent; never throws).
kube::ObjectReference referenceTo(const nlohmann::json& object, std::string apiVersion, std::string kind);

// Creates the Event and counts the write. A failure is logged (with `what` saying which Event) and
// returned; callers do not retry it: the action it reports is done.
core::Status recordEvent(ReconcileContext& context, const kube::ObjectReference& regarding,
                         const std::string& type, const std::string& reason, const std::string& action,
                         const std::string& note);

}  // namespace restarter::controller
