#include "restarter/core/annotations.hpp"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "json_access.hpp"
#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/decision_fold.hpp"
#include "restarter/core/ignore.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/reference_decision.hpp"
#include "restarter/core/reloader.hpp"

namespace restarter::core {

using nlohmann::json;
namespace d = detail;

namespace {

// A reference reading only some keys (Reference::keys) compares only them: the state's digest
// becomes the K2 digest of those keys, and the whole content's h2 digest an other digest, so an
// entry written as h2 (before key-level tracking, or while the reference read every key) still
// compares: the same whole content keeps the template's version, as before. Without the object's
// key digests (too many keys, or content not read) or a key, the whole content is compared.
void narrowToReadKeys(ObjectState& state, const Reference& ref) {
  if (ref.allKeys || state.presence != Presence::Present || !state.contentDigest || !state.keyDigests ||
      state.digestKeyId.empty() || state.digestScheme != DigestScheme::H2) {
    return;
  }
  const auto narrowed = readKeysDigest(*state.keyDigests, ref.keys);
  if (!narrowed) return;
  state.otherDigests.insert(state.otherDigests.begin(),
                            OtherDigest{*state.contentDigest, state.digestKeyId, DigestScheme::H2});
  state.contentDigest = *narrowed;
  state.digestScheme = DigestScheme::K2;
}

}  // namespace

ObjectState ObjectState::present(std::string uid, std::string resourceVersion, bool ignoreLabel,
                                 std::optional<ContentDigest> contentDigest) {
  ObjectState s;
  s.contentDigest = contentDigest;
  s.presence = Presence::Present;
  s.uid = std::move(uid);
  s.resourceVersion = std::move(resourceVersion);
  s.ignoreLabel = ignoreLabel;
  return s;
}

ObjectState ObjectState::absent() {
  ObjectState s;
  s.presence = Presence::Absent;
  return s;
}

ObjectState ObjectState::unknown(std::string problem) {
  ObjectState s;
  s.presence = Presence::Unknown;
  s.problem = std::move(problem);
  return s;
}

Result<ObjectState> objectStateFromMetadata(const json& metadata) {
  if (!metadata.is_object()) return d::wrongType("metadata", "an object", metadata);
  auto uid = d::optionalString(metadata, "uid", "metadata");
  if (!uid) return std::move(uid).error();
  auto rv = d::optionalString(metadata, "resourceVersion", "metadata");
  if (!rv) return std::move(rv).error();
  if (!uid->has_value() || uid->value().empty() || !rv->has_value() || rv->value().empty()) {
    return makeError(ErrorKind::InvalidInput, "metadata: uid and resourceVersion are required");
  }
  auto labels = d::optionalObject(metadata, "labels", "metadata");
  if (!labels) return std::move(labels).error();
  const bool ignored = *labels != nullptr && hasIgnoreLabel(**labels);
  ObjectState state = ObjectState::present(std::move(uid->value()), std::move(rv->value()), ignored);
  state.reloaderMatch = stringAt(metadata, {"annotations", kReloaderMatchAnnotation}) == "true";
  state.reloaderIgnore = stringAt(metadata, {"annotations", kReloaderIgnoreAnnotation}) == "true";
  return state;
}

Result<ObjectState> objectStateFromObject(const json& object, RefKind kind, bool readContent,
                                          const DigestKey* key) {
  if (!object.is_object()) return d::wrongType("object", "an object", object);
  const auto metadata = object.find("metadata");
  if (metadata == object.end()) return makeError(ErrorKind::InvalidInput, "the object has no metadata");
  auto state = objectStateFromMetadata(*metadata);
  if (!state || !readContent) return state;
  if (key == nullptr) {
    if (auto unkeyed = contentDigest(object, kind)) state->contentDigest = *unkeyed;
    return state;
  }
  auto digest = objectContentDigest(object, kind, *key);
  auto h1 = keyedContentDigest(object, kind, *key);
  if (!digest || !h1) return state;
  state->contentDigest = *digest;
  state->digestKeyId = key->id();
  if (auto keys = objectKeyDigests(object, *key))
    state->keyDigests = std::make_shared<const KeyDigests>(std::move(*keys));
  state->otherDigests.push_back(OtherDigest{*h1, key->id(), DigestScheme::H1});
  // During a rotation: the entries written under the previous key are compared under it.
  if (const DigestKey* previous = key->previous()) {
    auto old = objectContentDigest(object, kind, *previous);
    auto oldH1 = keyedContentDigest(object, kind, *previous);
    if (old) state->otherDigests.push_back(OtherDigest{*old, previous->id(), DigestScheme::H2});
    if (oldH1) state->otherDigests.push_back(OtherDigest{*oldH1, previous->id(), DigestScheme::H1});
  }
  return state;
}

const char* dispositionName(Disposition disposition) noexcept {
  switch (disposition) {
    case Disposition::Tracked: return "tracked";
    case Disposition::Absent: return "absent";
    case Disposition::IgnoredByLabel: return "ignored-by-label";
    case Disposition::IgnoredByAnnotation: return "ignored-by-annotation";
    case Disposition::NotSelected: return "not-selected";
  }
  return "tracked";
}

const char* noRestartName(NoRestart reason) noexcept {
  switch (reason) {
    case NoRestart::None: return "";
    case NoRestart::OptedIn: return "opted-in";
    case NoRestart::CreatedAfterWorkload: return "created-after-workload";
    case NoRestart::Baseline: return "baseline";
    case NoRestart::DeletedKept: return "deleted-kept";
  }
  return "";
}

const char* noRestartText(NoRestart reason) noexcept {
  switch (reason) {
    case NoRestart::None: return "";
    case NoRestart::OptedIn: return "opted in: baseline recorded, no restart";
    case NoRestart::CreatedAfterWorkload: return "created after the workload: pods start with it, no restart";
    case NoRestart::Baseline: return "pods run with the baseline version, no restart";
    case NoRestart::DeletedKept: return "deleted: running pods keep their copy, no restart";
  }
  return "";
}

const char* changeCauseName(ChangeCause cause) noexcept {
  switch (cause) {
    case ChangeCause::Added: return "added";
    case ChangeCause::Updated: return "updated";
    case ChangeCause::Recreated: return "recreated";
    case ChangeCause::Deleted: return "deleted";
    case ChangeCause::Unreferenced: return "unreferenced";
  }
  return "updated";
}

namespace {

Result<AnnotationMap> stringMap(const json& object, const std::string& path) {
  AnnotationMap out;
  if (object.is_null()) return out;
  if (!object.is_object()) return d::wrongType(path, "an object", object);
  for (const auto& [key, value] : object.items()) {
    if (!value.is_string()) return d::wrongType(path + "[" + key + "]", "a string", value);
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

// The JSON at a chain of object fields, or a null JSON when any link is absent.
Result<const json*> nestedObject(const json& root, std::initializer_list<std::string_view> fields) {
  const json* node = &root;
  std::string path;
  for (std::string_view field : fields) {
    auto next = d::optionalObject(*node, field, path);
    if (!next) return std::move(next).error();
    if (*next == nullptr) return static_cast<const json*>(nullptr);
    node = *next;
    path = d::joinPath(path, field);
  }
  return node;
}

// "<uid>/<resourceVersion>" -> uid; nullopt for any other value (e.g. the legacy marker).
std::optional<std::string_view> uidOf(const std::string& value) {
  const auto slash = value.find('/');
  if (slash == std::string::npos || slash == 0) return std::nullopt;
  return std::string_view(value).substr(0, slash);
}

}  // namespace

Result<AnnotationMap> templateAnnotations(const json& workload) {
  auto annotations = nestedObject(workload, {"spec", "template", "metadata", "annotations"});
  if (!annotations) return std::move(annotations).error();
  if (*annotations == nullptr) return AnnotationMap{};
  return stringMap(**annotations, "spec.template.metadata.annotations");
}

ContentRecords recordedContentDigests(const json& workload) {
  if (!workload.is_object()) return {};
  const json::json_pointer pointer("/metadata/annotations");
  if (!workload.contains(pointer)) return {};
  const json& annotations = workload.at(pointer);
  if (!annotations.is_object()) return {};
  const auto it = annotations.find(std::string(kContentDigestsAnnotation));
  if (it == annotations.end() || !it->is_string()) return {};
  return parseContentRecords(it->get_ref<const std::string&>());
}

namespace {

// What desiredAnnotations reads of the workload before deciding its references.
struct WorkloadInputs {
  IgnoreRules rules;
  ReferenceSelector selector;
  std::vector<Reference> refs;
  AnnotationMap templateNow;
  ContentRecords recorded;
  BaselineRecords baseline;
  bool hasRecord = false;
};

Result<WorkloadInputs> readWorkload(const json& workload, const SelectionOptions& selection) {
  if (!workload.is_object()) return d::wrongType("workload", "an object", workload);
  auto workloadAnnotations = nestedObject(workload, {"metadata", "annotations"});
  if (!workloadAnnotations) return std::move(workloadAnnotations).error();
  auto rules = ignoreRulesFromAnnotations(*workloadAnnotations ? **workloadAnnotations : json());
  if (!rules) return std::move(rules).error();
  auto podTemplate = nestedObject(workload, {"spec", "template"});
  if (!podTemplate) return std::move(podTemplate).error();
  if (*podTemplate == nullptr) {
    return makeError(ErrorKind::InvalidInput, "spec.template: the workload has no pod template");
  }
  auto refs = collectReferences(**podTemplate);
  if (!refs) return std::move(refs).error();
  ReferenceSelector selector = referenceSelector(workload, selection);
  selector.addListed(*refs);
  auto current = templateAnnotations(workload);
  if (!current) return std::move(current).error();
  // The baseline is read on CREATE too: an `absent` entry recorded there must survive the
  // webhook's reinvocation (the patched object, admitted again, must be final).
  return WorkloadInputs{std::move(*rules),
                        std::move(selector),
                        std::move(*refs),
                        std::move(*current),
                        recordedContentDigests(workload),
                        recordedBaseline(workload),
                        hasRestarterRecord(workload)};
}

template <typename Map>
std::optional<typename Map::mapped_type> entryOf(const Map& map, const std::string& key) {
  const auto it = map.find(key);
  return it == map.end() ? std::nullopt : std::optional<typename Map::mapped_type>(it->second);
}

// One reference's facts: what the workload holds for it, and its object unless screened out (the
// lookup is called only then).
ReferenceFacts factsOf(Reference ref, const WorkloadInputs& in, const ObjectLookup& lookup) {
  ReferenceFacts facts;
  facts.templateValue = entryOf(in.templateNow, templateAnnotationKey(ref.kind, ref.name));
  const std::string recordKey = contentRecordKey(ref.kind, ref.name);
  facts.baseline = entryOf(in.baseline, recordKey);
  facts.recorded = entryOf(in.recorded, recordKey);
  if (in.rules.ignores(ref.kind, ref.name)) {
    facts.screening = Screening::IgnoredByAnnotation;
  } else if (auto decided = in.selector.preselect(ref)) {
    // Reloader's rules select it in no case (reloader.hpp): kept as an ignored one, not looked up.
    facts.screening = Screening::NotSelected;
    facts.selection = std::move(*decided);
  } else {
    facts.state = lookup(ref.kind, ref.name);
    narrowToReadKeys(facts.state, ref);
    // Reloader's rules (reloader.hpp); under the restarter label everything is selected.
    if (facts.state.presence != Presence::Unknown) facts.selection = in.selector.select(ref, facts.state);
  }
  facts.ref = std::move(ref);
  return facts;
}

}  // namespace

Result<DesiredAnnotations> desiredAnnotations(const json& workload, const ObjectLookup& lookup,
                                              DesiredOptions options) {
  auto in = readWorkload(workload, options.selection);
  if (!in) return std::move(in).error();
  const WorkloadSituation situation{
      options.podsRunning, options.podsRunning && !options.rollOnOptIn && !in->hasRecord, in->hasRecord};
  std::vector<ReferenceDecision> decisions;
  decisions.reserve(in->refs.size());
  for (Reference& ref : in->refs) {
    auto decision = decideReference(factsOf(std::move(ref), *in, lookup), situation);
    if (!decision) return std::move(decision).error();
    decisions.push_back(std::move(*decision));
  }
  DesiredAnnotations out = foldDecisions(std::move(decisions), in->templateNow, in->recorded);
  out.optingIn = situation.optingIn;
  return out;
}

std::string AnnotationChange::describe() const {
  std::string out(refKindName(kind));
  const std::string from = before ? *before : baseline ? *baseline + " (baseline)" : "none";
  out += "/" + name + ": " + from + " -> " + after.value_or("none") + " (" + changeCauseName(cause) + ")";
  return out;
}

std::vector<AnnotationChange> diffAnnotations(const AnnotationMap& before, const AnnotationMap& after,
                                              const std::vector<Reference>& references) {
  std::map<std::string, const Reference*> byKey;
  for (const Reference& ref : references) {
    byKey.emplace(templateAnnotationKey(ref.kind, ref.name), &ref);
  }
  // Owned keys of both sides, in key order.
  std::map<std::string, std::pair<std::optional<std::string>, std::optional<std::string>>> sides;
  for (const auto& [key, value] : before) {
    if (parseTemplateAnnotationKey(key)) sides[key].first = value;
  }
  for (const auto& [key, value] : after) {
    if (parseTemplateAnnotationKey(key)) sides[key].second = value;
  }

  std::vector<AnnotationChange> changes;
  for (auto& [key, values] : sides) {
    if (values.first == values.second) continue;
    const TemplateKey parsed = *parseTemplateAnnotationKey(key);
    const auto ref = byKey.find(key);
    AnnotationChange change;
    change.key = key;
    change.kind = parsed.kind;
    change.name = ref != byKey.end() ? ref->second->name : parsed.namePart;
    change.before = std::move(values.first);
    change.after = std::move(values.second);
    if (!change.before) {
      change.cause = ChangeCause::Added;
    } else if (!change.after) {
      change.cause = ref != byKey.end() ? ChangeCause::Deleted : ChangeCause::Unreferenced;
    } else {
      const auto oldUid = uidOf(*change.before);
      const auto newUid = uidOf(*change.after);
      change.cause = oldUid && newUid && *oldUid != *newUid ? ChangeCause::Recreated : ChangeCause::Updated;
    }
    changes.push_back(std::move(change));
  }
  return changes;
}

Result<std::vector<AnnotationChange>> planAnnotationChanges(const json& workload,
                                                            const DesiredAnnotations& desired) {
  auto current = templateAnnotations(workload);
  if (!current) return std::move(current).error();
  std::vector<Reference> refs;
  refs.reserve(desired.references.size());
  std::map<std::string, const std::string*> baselineByKey;
  for (const ReferenceStatus& status : desired.references) {
    refs.push_back(status.ref);
    if (status.baseline) baselineByKey.emplace(status.key, &*status.baseline);
  }
  std::vector<AnnotationChange> changes = diffAnnotations(*current, desired.annotations, refs);
  // A value added where the pods ran with a baseline version is an update (or a re-creation) of
  // that version, not a new reference.
  for (AnnotationChange& change : changes) {
    const auto it = baselineByKey.find(change.key);
    if (change.before || !change.after || it == baselineByKey.end()) continue;
    change.baseline = *it->second;
    const auto oldUid = uidOf(*change.baseline);
    const auto newUid = uidOf(*change.after);
    if (!oldUid) continue;  // kBaselineAbsent: the pods started without the object, it was added
    change.cause = oldUid && newUid && *oldUid != *newUid ? ChangeCause::Recreated : ChangeCause::Updated;
  }
  return changes;
}

}  // namespace restarter::core
