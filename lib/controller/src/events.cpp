#include "restarter/controller/events.hpp"

namespace restarter::controller {

using nlohmann::json;

namespace {

std::string metadataString(const json& object, const char* field) {
  if (!object.is_object()) return {};
  const json::const_iterator metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  const json::const_iterator value = metadata->find(field);
  if (value == metadata->end() || !value->is_string()) return {};
  return value->get<std::string>();
}

}  // namespace

kube::ObjectReference referenceTo(const json& object, std::string apiVersion, std::string kind) {
  return kube::ObjectReference{std::move(apiVersion), std::move(kind), metadataString(object, "namespace"),
                               metadataString(object, "name"), metadataString(object, "uid")};
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
