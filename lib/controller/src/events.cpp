#include "restarter/controller/events.hpp"

#include "restarter/core/json_access.hpp"

namespace restarter::controller {

using nlohmann::json;

kube::ObjectReference referenceTo(const json& object, std::string apiVersion, std::string kind) {
  return kube::ObjectReference{std::move(apiVersion), std::move(kind),
                               core::metadataString(object, "namespace"), core::metadataString(object, "name"),
                               core::metadataString(object, "uid")};
}

core::Status recordEvent(ReconcileContext& context, const kube::ObjectReference& regarding,
                         const std::string& type, const std::string& reason, const std::string& action,
                         const std::string& note) {
  kube::EventRecord event;
  event.namespace_ = regarding.namespace_;
  event.regarding = regarding;
  event.type = type;
  event.reason = reason;
  event.action = action;
  event.note = note;
  event.reportingController = context.reportingController;
  event.reportingInstance = context.reportingInstance;
  auto created = context.client.createEvent(event);
  context.metrics.writes.with({"events", "create"}).inc();
  if (!created) {
    context.logger.warn("cannot record event",
                        {{"object", regarding.kind + " " + regarding.namespace_ + "/" + regarding.name},
                         {"reason", reason},
                         {"error", created.error().describe()}});
    return std::move(created).error();
  }
  return core::okStatus();
}

}  // namespace restarter::controller
