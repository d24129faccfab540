// explain-restart: flags, text rendering, --watch and exit codes (see explain_restart.hpp).
#include <unistd.h>

#include <iostream>
#include <map>
#include <ostream>

#include <cxxopts.hpp>

#include "restarter/cli/digest_key_flags.hpp"
#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/selection_flags.hpp"
#include "restarter/controller/ondelete.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/yaml_writer.hpp"
#include "restarter/kube/digest_key.hpp"

namespace restarter::cli {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr const char* kName = "explain-restart";

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

// One cause as a line: "configmap/app-config: u/1 -> u/2 (updated)", "containers[app].image
// changed", "created".
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

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

int exitFor(const core::Error& error) {
  switch (error.kind) {
    case core::ErrorKind::NotFound: return kExitNotFound;
    case core::ErrorKind::Forbidden:
    case core::ErrorKind::Unauthorized: return kExitForbidden;
    default: return kExitFailure;
  }
}

cxxopts::Options makeOptions(const Io& io) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "Explain why a workload restarted, and whether it will: each revision with what changed\n"
      "(restarter annotations: which ConfigMap/Secret and which versions; other template paths),\n"
      "whether the first rollout was restart-free, and what would restart it now.\n\n"
      "KIND is statefulset (sts), deployment (deploy) or daemonset (ds).\n\n"
      "Exit codes: 0 explained, 1 the API failed, 2 bad command line or unknown kind, 3 workload\n"
      "not found, 4 access denied, 5 no revisions yet.\n");
  options.custom_help("KIND/NAME [flags]");
  options.positional_help("");
  options.add_options()("o,output", "output format: text, json or yaml",
                        cxxopts::value<std::string>()->default_value("text"), "FORMAT")(
      "watch", "after the explanation, print one line per new revision with its cause, until interrupted")(
      "no-color",
      "never colour the text output (colour is used only on a terminal; NO_COLOR also disables it)")(
      "h,help", "show this help")("target", "KIND/NAME", cxxopts::value<std::vector<std::string>>());
  addJudgementFlags(options);
  addKubeFlags(options);
  options.parse_positional({"target"});
  return options;
}

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
  out << "  " << pad("REV", w0) << "  " << pad("NAME", w1) << "  " << pad("CREATED", w2) << "  "
      << pad("PODS", w3) << "  WHY\n";
  for (const Row& r : rows) {
    for (std::size_t i = 0; i < r.causes.size(); ++i) {
      if (i == 0) {
        out << "  " << pad(r.number, w0) << "  " << pad(r.name, w1) << "  " << pad(r.created, w2) << "  "
            << pad(r.pods, w3) << "  " << r.causes[i] << "\n";
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
  } else if (status == "restart-due") {
    const ordered_json hold = pending.contains("rolloutHold") ? pending["rolloutHold"] : ordered_json::object();
    const std::string holdStatus = hold.contains("status") ? str(hold["status"]) : "";
    if (holdStatus == "held") {
      const std::string description =
          hold.contains("description") ? str(hold["description"]) : "held until " + str(hold["until"]);
      const bool waiting = hold.contains("waitingFor") && hold["waitingFor"].is_string();
      out << style.yellow("a restart is due") << (waiting ? ", rollout held: " : ", rollout ") << description
          << " (the controller's rollout hold since the last rollout at " << str(hold["lastRollout"])
          << "; RolloutHeld Event at " << str(hold["recorded"]) << ")\n";
    } else {
      out << style.yellow("a restart is due") << " (the controller will apply it)\n";
      if (holdStatus == "unknown")
        out << "  whether the controller holds it is unknown: " << str(hold["reason"]) << "\n";
    }
    for (const auto& change : pending["changes"]) out << "  " << causeLine(change) << "\n";
  } else {
    out << "unknown: " << str(pending["reason"]) << "\n";
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
      out << "    " << pad(name, width) << "  " << pad(str(ref["disposition"]), 21)
          << (ref["value"].is_null() ? "" : "  " + str(ref["value"]))
          << (ref["optional"].get<bool>() ? "  (optional)" : "")
          << (ref.contains("baseline") && !ref["baseline"].is_null() ? "  baseline " + str(ref["baseline"])
                                                                     : "")
          << (ref.contains("metadataOnlyChange") && !ref["metadataOnlyChange"].is_null()
                  ? "  metadata-only change, no restart (now " + str(ref["metadataOnlyChange"]) + ")"
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

namespace {

// --watch: prints one line (text) or one JSON object (json/yaml) per new revision until the
// stream fails for good. Returns the exit code.
int watchRevisions(kube::Client& client, const ExplainInput& start, const std::string& namespace_,
                   OutputFormat format, Io& io) {
  const bool deployment = start.kind == core::WorkloadKind::Deployment;
  const auto resource =
      deployment ? kube::ResourceRef{"apps", "v1", "replicasets", "ReplicaSet", true}
                 : kube::ResourceRef{"apps", "v1", "controllerrevisions", "ControllerRevision", true};
  std::string uid;
  if (start.workload.contains("metadata") && start.workload["metadata"].contains("uid") &&
      start.workload["metadata"]["uid"].is_string()) {
    uid = start.workload["metadata"]["uid"].get<std::string>();
  }
  std::string selector;
  const json* matchLabels = nullptr;
  if (start.workload.contains("spec") && start.workload["spec"].contains("selector") &&
      start.workload["spec"]["selector"].contains("matchLabels")) {
    matchLabels = &start.workload["spec"]["selector"]["matchLabels"];
  }
  if (matchLabels != nullptr && matchLabels->is_object()) {
    for (const auto& [key, value] : matchLabels->items()) {
      if (value.is_string()) selector += (selector.empty() ? "" : ",") + key + "=" + value.get<std::string>();
    }
  }
  std::map<std::string, core::Revision> known;
  for (const core::Revision& revision : start.revisions) known[revision.name] = revision;

  // Prints `object` (a ControllerRevision or ReplicaSet) if it is a revision of the workload not
  // reported before, with its cause against the newest older revision.
  auto report = [&](const json& object) {
    std::optional<core::Revision> revision = revisionFromObject(object, start.kind, uid);
    if (!revision) return;
    const auto seen = known.find(revision->name);
    if (seen != known.end() && seen->second.number == revision->number) return;
    const core::Revision* previous = nullptr;
    for (const auto& [name, other] : known) {
      if (other.number < revision->number && (previous == nullptr || other.number > previous->number)) {
        previous = &other;
      }
    }
    core::RevisionCause cause;
    if (previous != nullptr) {
      cause = core::revisionCause(previous->podTemplate, revision->podTemplate);
    } else {
      cause.created = true;
    }
    const ordered_json causes = causesDocument(cause);
    if (format == OutputFormat::Text) {
      io.out << "revision " << revision->number << " " << revision->name << " " << revision->created << ":";
      if (causes.empty()) io.out << " no template change";
      for (std::size_t i = 0; i < causes.size(); ++i) io.out << (i == 0 ? " " : "; ") << causeLine(causes[i]);
      io.out << std::endl;
    } else {
      io.out << ordered_json{{"revision", revision->number},
                             {"name", revision->name},
                             {"created", revision->created},
                             {"causes", causes}}
                    .dump()
             << std::endl;
    }
    known[revision->name] = std::move(*revision);
  };

  std::string resourceVersion;
  for (int failures = 0; failures < 5;) {
    if (resourceVersion.empty()) {
      // (Re)list: revisions created since the explanation was read (or while a 410 forced this
      // relist) are reported here, so none is missed between reading and watching.
      kube::ListOptions list;
      list.labelSelector = selector;
      auto all = client.list(resource, namespace_, list);
      if (!all) {
        io.err << io.programName << " " << kName << ": watching: " << all.error().describe() << "\n";
        return exitFor(all.error());
      }
      for (json& item : all->items) report(item);
      resourceVersion = all->resourceVersion;
    }
    kube::WatchOptions options;
    options.resourceVersion = resourceVersion;
    options.labelSelector = selector;
    auto ended = client.watch(resource, namespace_, options, [&](kube::WatchEvent&& event) {
      if (std::string rv = core::metadataString(event.object, "resourceVersion"); !rv.empty()) {
        resourceVersion = std::move(rv);
      }
      if (event.type == kube::WatchEvent::Type::Added || event.type == kube::WatchEvent::Type::Modified) {
        report(event.object);
      }
      return true;
    });
    if (ended) {
      failures = 0;
      continue;
    }
    if (ended.error().kind == core::ErrorKind::Gone) {
      resourceVersion.clear();
      continue;
    }
    ++failures;
    io.err << io.programName << " " << kName << ": watch interrupted: " << ended.error().describe() << "\n";
  }
  return kExitFailure;
}

}  // namespace

void addJudgementFlags(cxxopts::Options& options) {
  options.add_options()("content-aware",
                        "read the content of these referenced kinds, as serve-controller --content-aware "
                        "does, to tell a metadata-only change (no restart) from a real one: configmaps, "
                        "all (also Secrets) or off",
                        cxxopts::value<std::string>()->default_value("configmaps"), "configmaps|all|off")(
      "ondelete-ready-timeout",
      "judge an OnDelete roll paused when a replacement pod is not Ready this "
      "long (give serve-controller's --ondelete-ready-timeout)",
      cxxopts::value<std::string>()->default_value(
          core::formatDuration(controller::kDefaultOnDeleteReadyTimeout)),
      "DURATION")("roll-on-opt-in",
                  "judge as serve-controller --roll-on-opt-in does: a workload restarter has no record of "
                  "is rolled rather than given a baseline",
                  cxxopts::value<bool>()->default_value("false"));
  addSelectionFlags(options);
  addDigestKeyFlags(options,
                    "only read, to compare contents as serve-controller does (without access to it, "
                    "contents are compared unkeyed)");
}

std::optional<core::DigestKey> readJudgementDigestKey(kube::Client& client, const JudgementOptions& judgement,
                                                      std::ostream& err) {
  if (judgement.contentAware == core::ContentAwareness::Off) return std::nullopt;
  auto key = kube::readDigestKey(client, judgement.digestKey.namespace_, judgement.digestKey.name);
  if (key) return std::move(*key);
  err << "warning: cannot read the digest key (" << key.error().describe()
      << "): contents are compared unkeyed, so a metadata-only change may be judged a change\n";
  return std::nullopt;
}

core::Result<JudgementOptions> judgementOptions(const cxxopts::ParseResult& flags) {
  JudgementOptions out;
  auto contentAware = core::parseContentAwareness(flags["content-aware"].as<std::string>());
  if (!contentAware) {
    return core::makeError(core::ErrorKind::InvalidInput, "--content-aware: " + contentAware.error().message);
  }
  out.contentAware = *contentAware;
  auto readyTimeout = core::parseDuration(flags["ondelete-ready-timeout"].as<std::string>());
  if (!readyTimeout) {
    return core::makeError(core::ErrorKind::InvalidInput,
                           "--ondelete-ready-timeout: " + readyTimeout.error().message);
  }
  out.readyTimeout = std::chrono::duration_cast<std::chrono::seconds>(*readyTimeout);
  out.rollOnOptIn = flags["roll-on-opt-in"].as<bool>();
  if (auto error = readSelectionFlags(flags, out.selection))
    return core::makeError(core::ErrorKind::InvalidInput, *error);
  if (auto error = readDigestKeyFlags(flags, out.digestKey))
    return core::makeError(core::ErrorKind::InvalidInput, *error);
  return out;
}

Subcommand explainRestartCommand() {
  return Subcommand{
      kName, "explain why a workload restarted, and whether it will",
      [](const std::vector<std::string>& args, Io& io) {
        cxxopts::Options options = makeOptions(io);
        ParsedFlags parsed = parseFlags(options, args, io, kName, true);
        if (parsed.exitNow) return *parsed.exitNow;
        const cxxopts::ParseResult& flags = *parsed.result;

        std::vector<std::string> target;
        if (flags.count("target") > 0) target = flags["target"].as<std::vector<std::string>>();
        if (target.size() == 2 && target[0].find('/') == std::string::npos) {
          target = {target[0] + "/" + target[1]};  // kubectl also accepts "KIND NAME"
        }
        if (target.size() != 1)
          return reportUsageError(io, kName, "expected one KIND/NAME, e.g. statefulset/web");
        const auto slash = target[0].find('/');
        if (slash == std::string::npos || slash + 1 == target[0].size()) {
          return reportUsageError(io, kName, "expected KIND/NAME, got \"" + target[0] + "\"");
        }
        auto kind = core::parseWorkloadKind(target[0].substr(0, slash));
        if (!kind) return reportUsageError(io, kName, kind.error().message);
        const std::string name = target[0].substr(slash + 1);
        const std::string output = flags["output"].as<std::string>();
        OutputFormat format;
        if (output == "text") {
          format = OutputFormat::Text;
        } else if (output == "json") {
          format = OutputFormat::Json;
        } else if (output == "yaml") {
          format = OutputFormat::Yaml;
        } else {
          return reportUsageError(io, kName, "--output must be text, json or yaml, not \"" + output + "\"");
        }
        const bool color = flags.count("no-color") == 0 && std::getenv("NO_COLOR") == nullptr &&
                           &io.out == &std::cout && isatty(STDOUT_FILENO) == 1;

        auto judgement = judgementOptions(flags);
        if (!judgement) return reportUsageError(io, kName, judgement.error().message);
        const std::string prefix = io.programName + " " + kName + ": ";
        auto client = kube::Client::connect(kubeLoadOptions(flags));
        if (!client) {
          io.err << prefix << client.error().describe() << "\n";
          return kExitFailure;
        }
        const std::string namespace_ = (*client)->defaultNamespace();
        const auto digestKey = readJudgementDigestKey(**client, *judgement, io.err);
        auto input =
            readExplainInput(**client, *kind, namespace_, name, judgement->contentAware, judgement->selection,
                             judgement->rollOnOptIn, digestKey ? &*digestKey : nullptr);
        if (!input) {
          const core::Error& error = input.error();
          if (error.kind == core::ErrorKind::NotFound) {
            io.err << prefix << core::workloadKindName(*kind) << " " << namespace_ << "/" << name
                   << " not found\n";
          } else if (error.kind == core::ErrorKind::Forbidden || error.kind == core::ErrorKind::Unauthorized) {
            io.err << prefix << "access denied: " << error.describe() << "\n";
          } else {
            io.err << prefix << error.describe() << "\n";
          }
          return exitFor(error);
        }
        input->readyTimeout = judgement->readyTimeout;
        const ordered_json document = explanationDocument(*input);
        switch (format) {
          case OutputFormat::Text: io.out << renderText(document, color); break;
          case OutputFormat::Json: io.out << document.dump(2) << "\n"; break;
          case OutputFormat::Yaml: io.out << core::toYaml(document); break;
        }
        io.out.flush();
        if (input->revisions.empty() && !flags.count("watch")) {
          io.err << prefix << core::workloadKindName(*kind) << " " << namespace_ << "/" << name
                 << " has no revisions yet\n";
          return kExitNoRevisions;
        }
        if (flags.count("watch") > 0) return watchRevisions(**client, *input, namespace_, format, io);
        return kExitOk;
      },
      [](const Io& io) { return describeFlags(makeOptions(io)); }};
}

}  // namespace restarter::cli
