#pragma once
// Desired pod-template annotations of a workload: the one function the controller, the webhook
// and explain-restart all call (docs/architecture.md, "Data flow"), and the diff of two annotation sets.
//
// For each reference of the pod template (references.hpp), keyed as annotation_keys.hpp says:
//   - a present object that is not ignored: `<uid>/<resourceVersion>` of now, except that an
//     older version of the same object is kept when the workload's record says its content equals
//     the content now (a metadata-only change; core::decideTrackedValue in content.hpp);
//   - an absent object (the caller confirmed it does not exist): no annotation, as commons-operator
//     26.3 writes. While pods run (DesiredOptions::podsRunning) a reference that is not `optional`
//     keeps whatever its template annotation holds: the running pods keep their copy, and new pods
//     could not start without the object anyway (docs/architecture.md, "Restart only when pods
//     need it"). An optional one loses it (its pods start without the object; the deletion rolls).
//     Where the template holds commons-operator's legacy value `changes-ignored`, it is kept, so a
//     migrated cluster sees no write;
//   - while pods run, a present object without a template annotation is recorded in the baseline
//     (baseline.hpp) instead of written into the template, when the pods run with it already: the
//     workload is being opted in (it carries no restarter record), or the object is one the pods
//     need (not `optional`) and so was created after them. A baseline entry holds the version until
//     the content changes (the same rule as a template value, decideTrackedValue); then the
//     reference is written into the template, and with it every baseline entry (one rollout), and
//     the baseline empties. An optional object that appears rolls, as before: the pods started
//     without it;
//   - an ignored object (ignore label, or ignore annotation on the workload): the annotation is
//     frozen at whatever the template holds now (nothing if nothing). Starting or stopping to
//     ignore an object therefore causes no restart of its own; the next real change after the
//     ignore is lifted does;
//   - an object whose state is unknown (the lookup failed or timed out): the whole computation
//     fails (Unavailable). A guess would write a wrong annotation and restart pods for nothing.
// Restarter-owned keys of the template that match no reference are dropped. Keys restarter does
// not own are never touched.
//
// desiredAnnotations reads the workload and looks each reference's object up, then composes two
// steps: each reference decided alone (reference_decision.hpp: the rules above as a table), and the
// decisions folded into one write (decision_fold.hpp: whether the workload rolls).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "restarter/core/baseline.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/references.hpp"
#include "restarter/core/result.hpp"
#include "restarter/core/selection.hpp"

namespace restarter::core {

using AnnotationMap = std::map<std::string, std::string>;

enum class Presence { Present, Absent, Unknown };

// What the caller knows about one referenced object right now.
struct ObjectState {
  Presence presence = Presence::Unknown;
  std::string uid;              // Present only
  std::string resourceVersion;  // Present only
  bool ignoreLabel = false;     // Present only: carries restarter.stackable.tech/ignore=true
  // Present only: the content digest (content.hpp); nullopt when the content was not read
  // (content-aware off for the kind), which makes every new version a change, as commons-operator.
  std::optional<ContentDigest> contentDigest;
  // Present only, with contentDigest: the id of the key it is keyed with (DigestKey::id; h2; empty:
  // it is unkeyed, as explain-restart computes it without the key), and its digests of other
  // schemes or keys, which compare record entries of those (content.hpp, decideTrackedValue).
  std::string digestKeyId;
  std::vector<OtherDigest> otherDigests;
  // Present only, with contentDigest: its scheme (H2; K2 once desiredAnnotations narrowed it to
  // the keys a reference reads), and the object's key digests (content.hpp; null when not known:
  // a reference reading some keys then compares the whole content). Immutable, shared.
  DigestScheme digestScheme = DigestScheme::H2;
  std::shared_ptr<const KeyDigests> keyDigests;
  // Present only: Reloader's annotations on the object, "true" (reloader.hpp).
  bool reloaderMatch = false;
  bool reloaderIgnore = false;
  std::string problem;  // Unknown only: why the state is not known

  static ObjectState present(std::string uid, std::string resourceVersion, bool ignoreLabel,
                             std::optional<ContentDigest> contentDigest = std::nullopt);
  static ObjectState absent();
  static ObjectState unknown(std::string problem);
};

// Reads an object's `metadata` (of a full object or a PartialObjectMetadata): uid,
// resourceVersion, the ignore label and Reloader's match and ignore annotations. InvalidInput when uid or resourceVersion is missing.
Result<ObjectState> objectStateFromMetadata(const nlohmann::json& metadata);
// The same from a whole ConfigMap or Secret, with its content digests when `readContent` (a
// content that cannot be hashed leaves the digests out: the object then rolls at every version, as
// commons-operator): h2 under `key` (core::objectContentDigest) with the h1 digest under `key` as
// an other digest (migration), and while `key` has a previous key its h2 and h1 digests under that
// one (rotation); or unkeyed when `key` is null (explain-restart without the key; the servers never
// pass null). The content is not kept.
Result<ObjectState> objectStateFromObject(const nlohmann::json& object, RefKind kind, bool readContent,
                                          const DigestKey* key);

// Answers for one referenced object of the workload's namespace. Must not throw.
using ObjectLookup = std::function<ObjectState(RefKind kind, const std::string& name)>;

// How one reference was turned into (or not into) an annotation; explain-restart shows this.
// NotSelected: Reloader's annotations do not select it (reloader.hpp); kept as an ignored one.
enum class Disposition { Tracked, Absent, IgnoredByLabel, IgnoredByAnnotation, NotSelected };
const char* dispositionName(Disposition disposition) noexcept;

// Why a reference whose object appeared, disappeared or is first seen restarts nothing
// (docs/architecture.md, "Restart only when pods need it"); None when that is not the case.
enum class NoRestart {
  None,
  OptedIn,               // first seen on a running workload: its version is the baseline
  CreatedAfterWorkload,  // a required object that appeared: the pods start with it
  Baseline,              // the baseline entry still holds (same version, or same content)
  DeletedKept,           // a required object deleted: the running pods keep their copy
};
const char* noRestartName(NoRestart reason) noexcept;
// "opted in: baseline recorded, no restart", "created after the workload: pods start with it, no
// restart", "pods run with the baseline version, no restart", "deleted: running pods keep their
// copy, no restart"; empty for None.
const char* noRestartText(NoRestart reason) noexcept;

// How desiredAnnotations is asked.
struct DesiredOptions {
  // False for a workload being created (the webhook at CREATE; no pod runs yet, so every present
  // object goes into the template at no cost); true everywhere else (the controller, the webhook at
  // UPDATE, explain-restart), which turns on the baseline and the deletion rules above.
  bool podsRunning = false;
  // serve-controller / serve-webhook --roll-on-opt-in: a workload restarter has no record of gets
  // its template annotations at once (a rollout), as before the baseline existed.
  bool rollOnOptIn = false;
  // --reloader-annotations, --auto-reload-all: when Reloader's annotations opt the workload in,
  // only what they select is tracked (reloader.hpp): the reload lists' names become references
  // too, and a reference not selected is kept as an ignored one (Disposition::NotSelected).
  SelectionOptions selection{};
};

// Why the content record is rewritten alone (DesiredAnnotations::recordRewrite).
enum class RecordRewrite {
  None,
  // The record holds an entry that is unkeyed, h1, or keyed with another key than the one the
  // lookups' digests are keyed with (ObjectState::digestKeyId; a rotated key) (docs/architecture.md,
  // "Keyed digests").
  Rekey,
  // The record lacks the entry of a tracked reference whose content is known and whose template
  // (or baseline) value stands, or holds another one: a workload written while its kind's content
  // was not read (--content-aware=configmaps before Secrets were read by default, or off), or
  // migrated from commons-operator. Recorded now, so that its next metadata-only change restarts
  // nothing (docs/architecture.md, "Content-aware restarts").
  Complete,
};

struct ReferenceStatus {
  Reference ref;
  std::string key;
  Disposition disposition = Disposition::Tracked;
  ObjectState state;
  std::optional<std::string> value;  // the desired annotation value, if any
  // Tracked only: the object has a newer version than `value` whose content is the same, so the
  // template keeps `value` (a metadata-only change, no restart).
  bool metadataOnly = false;
  // Under Reloader's annotations: the rule that selects the reference or why none does.
  std::string selection;
  // The reference's baseline entry (baseline.hpp) before this decision, if any.
  std::optional<std::string> baseline;
  NoRestart noRestart = NoRestart::None;
};

struct DesiredAnnotations {
  AnnotationMap annotations;                // restarter-owned keys only
  std::vector<ReferenceStatus> references;  // one per reference, sorted by (kind, name)
  // The content record the workload's metadata annotation kContentDigestsAnnotation should hold:
  // one entry per tracked reference whose content is known (formatContentRecords). Written only
  // together with a template change, never alone (docs/architecture.md, "Content-aware restarts").
  std::string contentDigests;
  // The baseline record the workload's metadata annotation kBaselineAnnotation should hold
  // (formatBaseline; empty: none). Unlike the content record it may be written alone: it records
  // what the pods run with, and writing it restarts nothing.
  std::string baseline;
  // The workload carried no restarter record: this computation opts it in.
  bool optingIn = false;
  // Why the controller writes contentDigests alone, a metadata-only write that restarts nothing
  // (None: it need not).
  RecordRewrite recordRewrite = RecordRewrite::None;
};

// The workload's recorded content digests (metadata annotation kContentDigestsAnnotation), parsed;
// empty when absent or not a string.
ContentRecords recordedContentDigests(const nlohmann::json& workload);

// The pod template's annotations (`spec.template.metadata.annotations`) of a workload as a map;
// empty when absent. InvalidInput when they are not an object of strings.
Result<AnnotationMap> templateAnnotations(const nlohmann::json& workload);

// The desired restarter-owned annotations of a workload object (StatefulSet, Deployment or
// DaemonSet JSON: `metadata.annotations` for ignore rules, `spec.template` for references and the
// current values). `lookup` is called at most once per reference, never for one ignored by
// annotation. Deterministic: same inputs, same output.
Result<DesiredAnnotations> desiredAnnotations(const nlohmann::json& workload, const ObjectLookup& lookup,
                                              DesiredOptions options = {});

// Why an owned annotation changes between two annotation sets.
enum class ChangeCause {
  Added,         // no value before: newly referenced, or the object was created
  Updated,       // same object (uid), new resourceVersion
  Recreated,     // a different object (uid) of the same name
  Deleted,       // still referenced, but the object no longer exists
  Unreferenced,  // the template no longer references the object
};
const char* changeCauseName(ChangeCause cause) noexcept;

struct AnnotationChange {
  std::string key;
  RefKind kind = RefKind::ConfigMap;
  std::string name;  // the object's name; the key's name part where the key is a mapped one that
                     // matches none of the references given
  std::optional<std::string> before;
  std::optional<std::string> after;
  ChangeCause cause = ChangeCause::Added;
  // The baseline entry the pods ran with where the template held nothing (planAnnotationChanges);
  // the cause is then judged against it (updated, recreated) rather than "added".
  std::optional<std::string> baseline;

  // "configmap/app-config: <uid>/<rv> -> <uid>/<rv> (updated)", with "none" for a missing side;
  // "<uid>/<rv> (baseline) -> ..." where the template held nothing but the baseline did.
  std::string describe() const;
};

// The restarter-owned keys that differ between `before` and `after` (foreign keys in either are
// ignored), sorted by key. `references` are those of the template `after` belongs to: they give
// the names behind mapped keys and tell Deleted from Unreferenced.
std::vector<AnnotationChange> diffAnnotations(const AnnotationMap& before, const AnnotationMap& after,
                                              const std::vector<Reference>& references);

// The changes that turn a workload's current template annotations into the desired ones.
Result<std::vector<AnnotationChange>> planAnnotationChanges(const nlohmann::json& workload,
                                                            const DesiredAnnotations& desired);

}  // namespace restarter::core
