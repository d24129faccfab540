#include "restarter/controller/queue_reason.hpp"

namespace restarter::controller {

std::string_view queueReasonName(QueueReason reason) {
  switch (reason) {  // no default: a reason without a name does not compile (-Wswitch -Werror)
    case QueueReason::ObjectChanged: return "object-changed";
    case QueueReason::RelatedChanged: return "related-changed";
    case QueueReason::RequeueAfter: return "requeue-after";
    case QueueReason::ErrorRetry: return "error-retry";
    case QueueReason::SlotFreed: return "slot-freed";
  }
  return "unknown";
}

std::string queueReasonsText(QueueReasons reasons) {
  std::string text;
  for (QueueReason reason : kQueueReasons) {
    if (!reasons.contains(reason)) continue;
    if (!text.empty()) text += ',';
    text += queueReasonName(reason);
  }
  return text;
}

}  // namespace restarter::controller
