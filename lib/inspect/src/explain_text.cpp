// The text of an explanation document (see explain.hpp, renderText).
#include <algorithm>
#include <sstream>

#include "restarter/inspect/explain.hpp"
#include "text_cells.hpp"

namespace restarter::inspect {

using nlohmann::ordered_json;

namespace {

struct Style {
  bool on = false;
  std::string bold(const std::string& s) const { return on ? "\033[1m" + s + "\033[0m" : s; }
  std::string green(const std::string& s) const { return on ? "\033[32m" + s + "\033[0m" : s; }
  std::string yellow(const std::string& s) const { return on ? "\033[33m" + s + "\033[0m" : s; }
};

std::string str(const ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "none";
  return value.dump();
}

// "a, b, c" for the first kShownKeys keys of an array, then "and N more": one line whatever the
// object holds (a key is at most 253 characters; the list at most core::kMaxReadKeys).
std::string keyList(const ordered_json& keys) {
  constexpr std::size_t kShownKeys = 8;
  std::string out;
  std::size_t shown = 0;
  for (const auto& key : keys) {
    if (shown == kShownKeys) break;
    out += (shown++ == 0 ? "" : ", ") + str(key);
  }
  if (keys.size() > shown) out += " and " + std::to_string(keys.size() - shown) + " more";
  return shown == 0 ? std::string("none") : out;
}

}  // namespace

std::string causeLine(const ordered_json& cause) {
  const std::string type = str(cause["type"]);
  if (type == "annotation") {
    return str(cause["object"]["kind"]) + "/" + str(cause["object"]["name"]) + ": " + str(cause["before"]) +
           " -> " + str(cause["after"]) + " (" + str(cause["change"]) + ")";
  }
  if (type == "template") {
    const std::string path = str(cause["path"]);
    return (path.empty() ? "the pod template" : path) + " changed";
  }
  return "created";
}

namespace {

void printRevisionTable(std::ostream& out, const ordered_json& doc, const Style& style) {
  struct Row {
    std::string number, name, created, pods;
    std::vector<std::string> causes;
  };
  std::vector<Row> rows;
  for (const auto& revision : doc["revisions"]) {
    Row row{std::to_string(revision["revision"].get<std::int64_t>()) +
                (revision["current"].get<bool>() ? " *" : ""),
            str(revision["name"]),
            str(revision["created"]),
            std::to_string(revision["pods"].get<std::int64_t>()),
            {}};
    for (const auto& cause : revision["causes"]) row.causes.push_back(causeLine(cause));
    if (row.causes.empty()) row.causes.push_back("no template change");
    rows.push_back(std::move(row));
  }
  std::size_t w0 = 3, w1 = 4, w2 = 7, w3 = 4;
  for (const Row& r : rows) {
    w0 = std::max(w0, r.number.size());
    w1 = std::max(w1, r.name.size());
    w2 = std::max(w2, r.created.size());
    w3 = std::max(w3, r.pods.size());
  }
  out << style.bold("Revisions") << ", oldest first (* current):\n";
  out << "  " << padCell("REV", w0) << "  " << padCell("NAME", w1) << "  " << padCell("CREATED", w2) << "  "
      << padCell("PODS", w3) << "  WHY\n";
  for (const Row& r : rows) {
    for (std::size_t i = 0; i < r.causes.size(); ++i) {
      if (i == 0) {
        out << "  " << padCell(r.number, w0) << "  " << padCell(r.name, w1) << "  " << padCell(r.created, w2)
            << "  " << padCell(r.pods, w3) << "  " << r.causes[i] << "\n";
      } else {
        out << "  " << std::string(w0 + w1 + w2 + w3 + 8, ' ') << r.causes[i] << "\n";
      }
    }
  }
}

}  // namespace

std::string renderText(const ordered_json& doc, bool color) {
  const Style style{color};
  std::ostringstream out;
  const auto& w = doc["workload"];
  out << style.bold(str(w["kind"]) + " " + str(w["namespace"]) + "/" + str(w["name"])) << "  generation "
      << w["generation"].get<std::int64_t>() << "  uid " << str(w["uid"]) << "\n";
  if (doc.contains("managedBy")) {
    const auto& managed = doc["managedBy"];
    out << "managed: "
        << (str(managed["by"]) == "none"
                ? std::string("no (neither labeled nor opted in by Reloader's annotations)")
                : str(managed["reason"]))
        << "\n";
  }
  out << "\n";

  const auto& first = doc["firstRollout"];
  const std::string verdict = str(first["verdict"]);
  out << style.bold("First rollout") << ": "
      << (verdict == "restart-free"    ? style.green("restart-free")
          : verdict == "extra-restart" ? style.yellow("extra restart")
                                       : std::string("unknown"))
      << "\n  " << str(first["reason"]) << "\n";
  const std::string writer = str(first["annotationsWrittenBy"]);
  if (writer == "admission") {
    out << "  restarter annotations set at admission by the webhook (no field manager owns them)\n";
  } else if (writer == "other") {
    out << "  restarter annotations owned by field manager " << str(first["fieldManager"])
        << " (not restarter: the manifest carries them)\n";
  } else if (writer == "controller") {
    // The owner of the live annotations, not of revision 1's: after any later change the
    // controller owns them even when the webhook set them at creation.
    out << "  restarter annotations last written by the controller (" << str(first["fieldManager"]) << ")\n";
  }
  out << "\n";
  printRevisionTable(out, doc, style);

  const auto& pending = doc["pending"];
  const std::string status = str(pending["status"]);
  out << "\n" << style.bold("Pending") << ": ";
  if (status == "up-to-date") {
    out << style.green("up to date") << "\n";
  } else if (status == "restart-due" && pending.contains("rolloutMode") &&
             pending["rolloutMode"].contains("rollCommand")) {
    // Manual mode (gate 1): the controller records it and never rolls it; no other gate applies.
    out << style.yellow("manual: pending") << "; run `" << str(pending["rolloutMode"]["rollCommand"])
        << "` (restarter.stackable.tech/rollout: manual: the controller does not roll it)\n";
    for (const auto& change : pending["changes"]) out << "  " << causeLine(change) << "\n";
  } else if (status == "restart-due") {
    const ordered_json hold = pending.contains("rolloutHold") ? pending["rolloutHold"] : ordered_json::object();
    const std::string holdStatus = hold.contains("status") ? str(hold["status"]) : "";
    const ordered_json window =
        pending.contains("rolloutWindow") ? pending["rolloutWindow"] : ordered_json::object();
    if (window.contains("status") && str(window["status"]) == "held") {
      // The first gate: whatever else holds it is judged again at the opening.
      out << style.yellow("a restart is due") << ", rollout " << str(window["description"]) << " (window \""
          << str(window["window"]) << "\" from the " << str(window["source"]) << ")\n";
    } else if (holdStatus == "held") {
      const std::string description =
          hold.contains("description") ? str(hold["description"]) : "held until " + str(hold["until"]);
      const bool waiting = hold.contains("waitingFor") && hold["waitingFor"].is_string();
      out << style.yellow("a restart is due") << (waiting ? ", rollout held: " : ", rollout ") << description
          << " (the controller's rollout hold since the last rollout at " << str(hold["lastRollout"])
          << "; RolloutHeld Event at " << str(hold["recorded"]) << ")\n";
    } else {
      const ordered_json queue =
          pending.contains("rolloutQueue") ? pending["rolloutQueue"] : ordered_json::object();
      const std::string queueStatus = queue.contains("status") ? str(queue["status"]) : "";
      if (queueStatus == "queued") {
        out << style.yellow("a restart is due") << ", " << str(queue["description"])
            << " (--max-concurrent-rollouts; priority " << queue["priority"].dump() << ", queued since "
            << str(queue["since"]) << ", counted in " << str(queue["scope"]) << ")\n";
      } else {
        out << style.yellow("a restart is due") << " (the controller will apply it)\n";
        if (queueStatus == "unknown")
          out << "  its place in the controller's rollout queue is unknown: " << str(queue["reason"]) << "\n";
      }
      if (holdStatus == "unknown")
        out << "  whether the controller holds it is unknown: " << str(hold["reason"]) << "\n";
    }
    for (const auto& change : pending["changes"]) out << "  " << causeLine(change) << "\n";
  } else if (status == "refused-too-large") {
    out << style.yellow("refused") << ": " << str(pending["reason"])
        << " (the apiserver would refuse the write; the controller records one AnnotationsTooLarge Event and "
           "does not retry)\n";
    for (const auto& change : pending["changes"]) out << "  " << causeLine(change) << "\n";
  } else {
    out << "unknown: " << str(pending["reason"]) << "\n";
  }
  if (pending.contains("rolloutMode") && pending["rolloutMode"].contains("invalidValue")) {
    out << "  " << style.yellow("warning") << ": restarter.stackable.tech/rollout is \""
        << str(pending["rolloutMode"]["invalidValue"]) << "\", neither manual nor auto: rolled as auto\n";
  }
  if (pending.contains("rolloutWindow") && str(pending["rolloutWindow"]["status"]) == "invalid") {
    out << "  " << style.yellow("invalid rollout window") << " \"" << str(pending["rolloutWindow"]["window"])
        << "\": " << str(pending["rolloutWindow"]["reason"])
        << " (no window holds this workload; InvalidRolloutWindow Event)\n";
  }
  if (pending.contains("baselineRecorded")) {
    out << "  baseline recorded at " << str(pending["baselineRecorded"]["time"]) << ": "
        << str(pending["baselineRecorded"]["note"]) << "\n";
  }
  if (!pending["references"].empty()) {
    std::size_t width = 0;
    for (const auto& ref : pending["references"]) {
      width = std::max(width, str(ref["kind"]).size() + 1 + str(ref["name"]).size());
    }
    out << "  references:\n";
    for (const auto& ref : pending["references"]) {
      const std::string name = str(ref["kind"]) + "/" + str(ref["name"]);
      out << "    " << padCell(name, width) << "  " << padCell(str(ref["disposition"]), 21)
          << (ref["value"].is_null() ? "" : "  " + str(ref["value"]))
          << (ref["optional"].get<bool>() ? "  (optional)" : "")
          << (ref.contains("baseline") && !ref["baseline"].is_null() ? "  baseline " + str(ref["baseline"])
                                                                     : "")
          << (ref.contains("keysRead") && ref["keysRead"].is_array()
                  ? "  keys read: " + keyList(ref["keysRead"])
                  : "")
          << (ref.contains("metadataOnlyChange") && !ref["metadataOnlyChange"].is_null()
                  ? (ref.contains("keysRead") && ref["keysRead"].is_array()
                         ? "  keys read unchanged, no restart (now " + str(ref["metadataOnlyChange"]) +
                               ": other keys or metadata changed, or a read key changed back before restarter acted)"
                         : "  same content, no restart (now " + str(ref["metadataOnlyChange"]) +
                               ": only metadata changed, or the content changed back before restarter acted)")
                  : "")
          << (ref.contains("selection") && !ref["selection"].is_null()
                  ? (str(ref["disposition"]) == "not-selected" ? "  not selected: " : "  selected by ") +
                        str(ref["selection"])
                  : "")
          << (ref.contains("noRestart") && !ref["noRestart"].is_null() ? "  " + str(ref["noRestart"]) : "")
          << "\n";
    }
  }
  if (doc.contains("roll")) {
    const auto& roll = doc["roll"];
    const std::string state = str(roll["state"]);
    out << "\n"
        << style.bold("Roll") << " (" << str(roll["updateStrategy"]) << "): "
        << (state == "done"     ? style.green(state)
            : state == "paused" ? style.yellow(state)
                                : state);
    if (!str(roll["reason"]).empty()) out << "\n  " << str(roll["reason"]);
    out << "\n";
    auto names = [](const ordered_json& list) {
      std::string joined;
      for (const auto& name : list) joined += (joined.empty() ? "" : ", ") + str(name);
      return joined;
    };
    if (!roll["outdatedPods"].empty()) {
      out << "  " << roll["outdatedPods"].size()
          << " pods still run an outdated revision: " << names(roll["outdatedPods"]) << "\n";
    }
    if (!roll["keptPods"].empty()) {
      out << "  kept by the partition: " << names(roll["keptPods"]) << "\n";
    }
  }
  return out.str();
}

}  // namespace restarter::inspect
