// The text of an explanation (see explanation.hpp, renderText).
#include <algorithm>
#include <sstream>

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/inspect/explanation.hpp"
#include "text_cells.hpp"

namespace restarter::inspect {

namespace {

struct Style {
  bool on = false;
  std::string bold(const std::string& s) const { return on ? "\033[1m" + s + "\033[0m" : s; }
  std::string green(const std::string& s) const { return on ? "\033[32m" + s + "\033[0m" : s; }
  std::string yellow(const std::string& s) const { return on ? "\033[33m" + s + "\033[0m" : s; }
};

std::string orNone(const std::optional<std::string>& value) { return value ? *value : "none"; }

// "a, b, c" for the first kShownKeys keys, then "and N more": one line whatever the object holds
// (a key is at most 253 characters; the list at most core::kMaxReadKeys).
std::string keyList(const std::vector<std::string>& keys) {
  constexpr std::size_t kShownKeys = 8;
  std::string out;
  std::size_t shown = 0;
  for (const auto& key : keys) {
    if (shown == kShownKeys) break;
    out += (shown++ == 0 ? "" : ", ") + key;
  }
  if (keys.size() > shown) out += " and " + std::to_string(keys.size() - shown) + " more";
  return shown == 0 ? std::string("none") : out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

void printHeader(std::ostream& out, const Explanation& e, const Style& style) {
  out << style.bold(std::string(core::workloadKindName(e.workload.kind)) + " " + e.workload.namespace_ + "/" +
                    e.workload.name)
      << "  generation " << e.firstRollout.generation << "  uid " << e.workload.uid << "\n";
  out << "managed: "
      << (e.management.by == core::ManagedBy::None
              ? std::string("no (neither labeled nor opted in by Reloader's annotations)")
              : e.management.reason)
      << "\n\n";
}

std::string verdictText(core::FirstRolloutVerdict verdict, const Style& style) {
  switch (verdict) {
    case core::FirstRolloutVerdict::RestartFree: return style.green("restart-free");
    case core::FirstRolloutVerdict::ExtraRestart: return style.yellow("extra restart");
    case core::FirstRolloutVerdict::Unknown: return "unknown";
  }
  return "unknown";
}

void printFirstRollout(std::ostream& out, const core::FirstRollout& first, const Style& style) {
  out << style.bold("First rollout") << ": " << verdictText(first.verdict, style) << "\n  " << first.reason
      << "\n";
  switch (first.writer) {
    case core::AnnotationWriter::Admission:
      out << "  restarter annotations set at admission by the webhook (no field manager owns them)\n";
      break;
    case core::AnnotationWriter::Other:
      out << "  restarter annotations owned by field manager " << first.fieldManager
          << " (not restarter: the manifest carries them)\n";
      break;
    case core::AnnotationWriter::Controller:
      // The owner of the live annotations, not of revision 1's: after any later change the
      // controller owns them even when the webhook set them at creation.
      out << "  restarter annotations last written by the controller (" << first.fieldManager << ")\n";
      break;
    case core::AnnotationWriter::None:
    case core::AnnotationWriter::Unknown: break;
  }
  out << "\n";
}

void printRevisionTable(std::ostream& out, const Explanation& e, const Style& style) {
  struct Row {
    std::string number, name, created, pods;
    std::vector<std::string> causes;
  };
  std::vector<Row> rows;
  for (const core::ExplainedRevision& revision : e.revisions) {
    Row row{
        std::to_string(revision.revision.number) + (revision.revision.name == e.currentRevision ? " *" : ""),
        revision.revision.name, revision.revision.created, std::to_string(revision.revision.pods),
        causeLines(revision.cause)};
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

// A restart due (not manual): the first gate that holds it, or that the controller applies it.
void printRestartDue(std::ostream& out, const Pending& pending, const Style& style) {
  const RolloutHold& hold = pending.hold;
  const RolloutWindow& window = pending.window;
  const RolloutQueue& queue = pending.queue;
  if (window.state == WindowState::Held) {
    // The first gate: whatever else holds it is judged again at the opening.
    out << style.yellow("a restart is due") << ", rollout " << window.description << " (window \""
        << window.window << "\" from the " << windowSourceName(window.source) << ")\n";
  } else if (hold.state == HoldState::Held) {
    out << style.yellow("a restart is due") << (hold.waitingFor ? ", rollout held: " : ", rollout ")
        << hold.description << " (the controller's rollout hold since the last rollout at "
        << (hold.lastRollout ? base::formatRfc3339(*hold.lastRollout) : "none") << "; RolloutHeld Event at "
        << base::formatRfc3339(hold.recorded) << ")\n";
  } else {
    if (queue.state == QueueState::Queued) {
      out << style.yellow("a restart is due") << ", " << core::describeQueued(queue.ahead)
          << " (--max-concurrent-rollouts; priority " << queue.priority << ", queued since "
          << base::formatRfc3339(queue.since) << ", counted in " << queue.scope << ")\n";
    } else {
      out << style.yellow("a restart is due") << " (the controller will apply it)\n";
      if (queue.state == QueueState::Unknown)
        out << "  its place in the controller's rollout queue is unknown: " << orNone(queue.reason) << "\n";
    }
    if (hold.state == HoldState::Unknown)
      out << "  whether the controller holds it is unknown: " << orNone(hold.reason) << "\n";
  }
}

void printPendingState(std::ostream& out, const Pending& pending, const Style& style) {
  out << "\n" << style.bold("Pending") << ": ";
  switch (pending.state) {
    case PendingState::UpToDate: out << style.green("up to date") << "\n"; return;
    case PendingState::RestartDue:
      if (pending.mode.rollCommand) {
        // Manual mode (gate 1): the controller records it and never rolls it; no other gate applies.
        out << style.yellow("manual: pending") << "; run `" << *pending.mode.rollCommand
            << "` (restarter.stackable.tech/rollout: manual: the controller does not roll it)\n";
      } else {
        printRestartDue(out, pending, style);
      }
      break;
    case PendingState::RefusedTooLarge:
      out << style.yellow("refused") << ": " << pending.reason
          << " (the apiserver would refuse the write; the controller records one AnnotationsTooLarge Event and "
             "does not retry)\n";
      break;
    case PendingState::Unknown: out << "unknown: " << pending.reason << "\n"; return;
  }
  for (const auto& change : pending.changes) out << "  " << changeLine(change) << "\n";
}

std::string referenceLine(const core::ReferenceStatus& ref, std::size_t width) {
  std::string line = "    " +
                     padCell(std::string(core::refKindName(ref.ref.kind)) + "/" + ref.ref.name, width) + "  " +
                     padCell(core::dispositionName(ref.disposition), 21);
  if (ref.value) line += "  " + *ref.value;
  if (ref.ref.optional) line += "  (optional)";
  if (ref.baseline) line += "  baseline " + *ref.baseline;
  if (!ref.ref.allKeys) line += "  keys read: " + keyList(ref.ref.keys);
  if (ref.metadataOnly) {
    const std::string now = ref.state.uid + "/" + ref.state.resourceVersion;
    line += !ref.ref.allKeys
                ? "  keys read unchanged, no restart (now " + now +
                      ": other keys or metadata changed, or a read key changed back before restarter acted)"
                : "  same content, no restart (now " + now +
                      ": only metadata changed, or the content changed back before restarter acted)";
  }
  if (!ref.selection.empty())
    line += (ref.disposition == core::Disposition::NotSelected ? "  not selected: " : "  selected by ") +
            ref.selection;
  if (ref.noRestart != core::NoRestart::None) line += "  " + std::string(core::noRestartText(ref.noRestart));
  return line;
}

void printPendingDetails(std::ostream& out, const Pending& pending, const Style& style) {
  if (pending.mode.invalidValue) {
    out << "  " << style.yellow("warning") << ": restarter.stackable.tech/rollout is \""
        << *pending.mode.invalidValue << "\", neither manual nor auto: rolled as auto\n";
  }
  if (pending.window.state == WindowState::Invalid) {
    out << "  " << style.yellow("invalid rollout window") << " \"" << pending.window.window
        << "\": " << pending.window.reason << " (no window holds this workload; InvalidRolloutWindow Event)\n";
  }
  if (pending.baselineRecorded) {
    out << "  baseline recorded at " << pending.baselineRecorded->time << ": " << pending.baselineRecorded->note
        << "\n";
  }
  if (pending.references.empty()) return;
  std::size_t width = 0;
  for (const auto& ref : pending.references)
    width = std::max(width, std::string(core::refKindName(ref.ref.kind)).size() + 1 + ref.ref.name.size());
  out << "  references:\n";
  for (const auto& ref : pending.references) out << referenceLine(ref, width) << "\n";
}

void printRoll(std::ostream& out, const Roll& roll, const Style& style) {
  const std::string state = rollStateName(roll.state);
  out << "\n"
      << style.bold("Roll") << " (" << updateStrategyName(roll.strategy) << "): "
      << (roll.state == RollState::Done     ? style.green(state)
          : roll.state == RollState::Paused ? style.yellow(state)
                                            : state);
  if (!roll.reason.empty()) out << "\n  " << roll.reason;
  out << "\n";
  if (!roll.outdatedPods.empty()) {
    out << "  " << roll.outdatedPods.size()
        << " pods still run an outdated revision: " << joined(roll.outdatedPods) << "\n";
  }
  if (!roll.keptPods.empty()) out << "  kept by the partition: " << joined(roll.keptPods) << "\n";
}

}  // namespace

std::string changeLine(const core::AnnotationChange& change) {
  return std::string(core::refKindName(change.kind)) + "/" + change.name + ": " + orNone(change.before) +
         " -> " + orNone(change.after) + " (" + core::changeCauseName(change.cause) + ")";
}

std::vector<std::string> causeLines(const core::RevisionCause& cause) {
  std::vector<std::string> lines;
  if (cause.created) lines.emplace_back("created");
  for (const auto& change : cause.annotations) lines.push_back(changeLine(change));
  for (const auto& path : cause.templatePaths)
    lines.push_back((path.empty() ? "the pod template" : path) + " changed");
  return lines;
}

std::string renderText(const Explanation& explanation, bool color) {
  const Style style{color};
  std::ostringstream out;
  printHeader(out, explanation, style);
  printFirstRollout(out, explanation.firstRollout, style);
  printRevisionTable(out, explanation, style);
  printPendingState(out, explanation.pending, style);
  printPendingDetails(out, explanation.pending, style);
  if (explanation.roll) printRoll(out, *explanation.roll, style);
  return out.str();
}

}  // namespace restarter::inspect
