#include "restarter/core/reloader.hpp"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"

namespace restarter::core {

using nlohmann::json;

namespace {

// The string value of `key` in an annotation object, nullopt when absent or not a string (Go's
// map lookup: absent reads as "").
std::optional<std::string> annotation(const json* annotations, std::string_view key) {
  if (annotations == nullptr || !annotations->is_object()) return std::nullopt;
  const auto it = annotations->find(key);
  if (it == annotations->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

bool isTrue(const std::optional<std::string>& value) { return value && parseGoBool(*value).value_or(false); }

// Reloader's checkIfResourceIsExcluded and the reload list: comma-separated, each entry trimmed.
std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string entry = text.substr(start, comma - start);
    const auto first = entry.find_first_not_of(" \t\n\r\f\v");
    const auto last = entry.find_last_not_of(" \t\n\r\f\v");
    if (first != std::string::npos) out.push_back(entry.substr(first, last - first + 1));
    start = comma + 1;
  }
  return out;
}

std::string_view reloadKey(RefKind kind) {
  return kind == RefKind::ConfigMap ? kReloaderConfigMapReloadAnnotation : kReloaderSecretReloadAnnotation;
}
std::string_view typedAutoKey(RefKind kind) {
  return kind == RefKind::ConfigMap ? kReloaderConfigMapAutoAnnotation : kReloaderSecretAutoAnnotation;
}
std::string_view excludeKey(RefKind kind) {
  return kind == RefKind::ConfigMap ? kReloaderConfigMapExcludeAnnotation : kReloaderSecretExcludeAnnotation;
}

ReloaderKindRules kindRules(RefKind kind, const json* metadata, const json* podTemplate, bool autoReloadAll) {
  ReloaderKindRules rules;
  rules.kind = kind;
  if (const auto excluded = annotation(metadata, excludeKey(kind))) {
    for (std::string& name : splitList(*excluded)) rules.excluded.insert(std::move(name));
  }
  const json* source = metadata;
  const auto found = [&](const json* annotations) {
    return annotation(annotations, reloadKey(kind)) || annotation(annotations, kReloaderAutoAnnotation) ||
           annotation(annotations, typedAutoKey(kind)) || annotation(annotations, kReloaderSearchAnnotation);
  };
  if (!found(metadata)) {
    source = podTemplate;
    rules.fromTemplate = true;
  }
  if (const auto list = annotation(source, reloadKey(kind))) {
    for (std::string& entry : splitList(*list)) {
      (isValidObjectName(entry) ? rules.listed : rules.unusable).push_back(std::move(entry));
    }
  }
  rules.search = annotation(source, kReloaderSearchAnnotation) == "true";
  const auto autoValue = annotation(source, kReloaderAutoAnnotation);
  const auto typedValue = annotation(source, typedAutoKey(kind));
  if (isTrue(autoValue)) {
    rules.autoBy = std::string(kReloaderAutoAnnotation);
  } else if (isTrue(typedValue)) {
    rules.autoBy = std::string(typedAutoKey(kind));
  } else if (autoReloadAll && autoValue.value_or("").empty() && typedValue.value_or("").empty()) {
    rules.autoBy = "--auto-reload-all";
  }
  return rules;
}

void addReason(std::vector<std::string>& reasons, std::string reason) {
  if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(std::move(reason));
}

}  // namespace

std::optional<bool> parseGoBool(std::string_view text) noexcept {
  if (text == "1" || text == "t" || text == "T" || text == "TRUE" || text == "true" || text == "True")
    return true;
  if (text == "0" || text == "f" || text == "F" || text == "FALSE" || text == "false" || text == "False")
    return false;
  return std::nullopt;
}

ReloaderRules reloaderRules(const json& workload, bool autoReloadAll) {
  const json* metadata = valueAt(workload, {"metadata", "annotations"});
  const json* podTemplate = valueAt(workload, {"spec", "template", "metadata", "annotations"});
  ReloaderRules rules;
  rules.configMaps = kindRules(RefKind::ConfigMap, metadata, podTemplate, autoReloadAll);
  rules.secrets = kindRules(RefKind::Secret, metadata, podTemplate, autoReloadAll);
  return rules;
}

Management workloadManagement(const json& workload, const SelectionOptions& options) {
  Management out;
  if (stringAt(workload, {"metadata", "labels", kEnabledLabel}) == kEnabledLabelValue) {
    out.by = ManagedBy::Label;
    out.reason = "label " + std::string(kEnabledSelector);
    return out;
  }
  // Labeled enabled=false: restarter's explicit opt-out beats Reloader's opt-in (and lets the
  // webhook configuration's objectSelector leave it out).
  if (stringAt(workload, {"metadata", "labels", kEnabledLabel}) == "false") return out;
  if (!options.reloaderAnnotations || !workload.is_object()) return out;
  const ReloaderRules rules = reloaderRules(workload, options.autoReloadAll);
  std::vector<std::string> reasons;
  for (const ReloaderKindRules* kind : {&rules.configMaps, &rules.secrets}) {
    if (kind->autoBy) addReason(reasons, *kind->autoBy);
    if (kind->search) addReason(reasons, std::string(kReloaderSearchAnnotation));
    if (!kind->listed.empty()) addReason(reasons, std::string(reloadKey(kind->kind)));
  }
  if (reasons.empty()) return out;
  out.by = ManagedBy::Reloader;
  for (const std::string& reason : reasons) out.reason += (out.reason.empty() ? "" : ", ") + reason;
  return out;
}

ReferenceSelector::ReferenceSelector(ReloaderRules rules) : rules_(std::move(rules)) {}

void ReferenceSelector::addListed(std::vector<Reference>& refs) {
  if (!rules_) return;
  bool added = false;
  for (const ReloaderKindRules* kind : {&rules_->configMaps, &rules_->secrets}) {
    for (const std::string& name : kind->listed) {
      const bool present = std::any_of(refs.begin(), refs.end(), [&](const Reference& ref) {
        return ref.kind == kind->kind && ref.name == name;
      });
      if (present) continue;
      // Not optional: named on purpose, and an object created after its workload is then recorded
      // in the baseline rather than rolled (Reloader does not reload on create either).
      refs.push_back(Reference{kind->kind, name, false, true, {}});
      listedOnly_.emplace(kind->kind, name);
      added = true;
    }
  }
  if (added) {
    std::sort(refs.begin(), refs.end(), [](const Reference& a, const Reference& b) {
      return std::pair(a.kind, a.name) < std::pair(b.kind, b.name);
    });
  }
}

std::optional<Selection> ReferenceSelector::preselect(const Reference& ref) const {
  if (!rules_) return std::nullopt;
  const ReloaderKindRules& rules = rules_->of(ref.kind);
  if (rules.excluded.count(ref.name) > 0) {
    return Selection{false, "excluded by " + std::string(excludeKey(ref.kind))};
  }
  const bool listed = std::find(rules.listed.begin(), rules.listed.end(), ref.name) != rules.listed.end();
  if (listed || rules.search || rules.autoBy) return std::nullopt;
  if (!rules.listed.empty()) return Selection{false, "not in " + std::string(reloadKey(ref.kind))};
  return Selection{false, "no Reloader annotation selects " + std::string(refKindName(ref.kind)) + "s"};
}

Selection ReferenceSelector::select(const Reference& ref, const ObjectState& state) const {
  if (!rules_) return Selection{};
  if (auto decided = preselect(ref)) return *decided;
  const ReloaderKindRules& rules = rules_->of(ref.kind);
  const bool present = state.presence == Presence::Present;
  if (present && state.reloaderIgnore) {
    return Selection{false, std::string(kReloaderIgnoreAnnotation) + " on the object"};
  }
  if (std::find(rules.listed.begin(), rules.listed.end(), ref.name) != rules.listed.end()) {
    return Selection{
        true, "listed in " + std::string(reloadKey(ref.kind)) +
                  (listedOnly_.count({ref.kind, ref.name}) > 0 ? " (not referenced by the pod spec)" : "")};
  }
  if (rules.search && present && state.reloaderMatch) {
    return Selection{true, std::string(kReloaderSearchAnnotation) + " and the object's " +
                               std::string(kReloaderMatchAnnotation)};
  }
  if (rules.autoBy) return Selection{true, *rules.autoBy};
  if (rules.search) {
    return Selection{
        false, std::string(kReloaderSearchAnnotation) + ": the object " +
                   (present ? "lacks " + std::string(kReloaderMatchAnnotation) : std::string("is absent"))};
  }
  return Selection{false, "not in " + std::string(reloadKey(ref.kind))};
}

ReferenceSelector referenceSelector(const json& workload, const SelectionOptions& options) {
  if (workloadManagement(workload, options).by != ManagedBy::Reloader) return ReferenceSelector();
  return ReferenceSelector(reloaderRules(workload, options.autoReloadAll));
}

Result<std::vector<Reference>> trackedReferences(const json& workload, const SelectionOptions& options) {
  const json* podTemplate = valueAt(workload, {"spec", "template"});
  if (podTemplate == nullptr) {
    return makeError(ErrorKind::InvalidInput, "spec.template: the workload has no pod template");
  }
  auto refs = collectReferences(*podTemplate);
  if (!refs) return refs;
  ReferenceSelector selector = referenceSelector(workload, options);
  selector.addListed(*refs);
  return refs;
}

}  // namespace restarter::core
