#include "restarter/core/reloader.hpp"

#include <map>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace restarter::core;
using nlohmann::json;

namespace {

const SelectionOptions kReloader{true, false};
const SelectionOptions kReloaderAll{true, true};

// A Deployment using ConfigMap app-config (volume) and Secret app-secret (envFrom), with the
// given workload and template annotations.
json workload(const json& workloadAnnotations = nullptr, const json& templateAnnotations = nullptr) {
  json deploy = {{"apiVersion", "apps/v1"},
                 {"kind", "Deployment"},
                 {"metadata", {{"name", "web"}, {"namespace", "default"}}},
                 {"spec",
                  {{"template",
                    {{"metadata", {{"labels", {{"app", "web"}}}}},
                     {"spec",
                      {{"volumes", {{{"name", "cfg"}, {"configMap", {{"name", "app-config"}}}}}},
                       {"containers",
                        {{{"name", "app"}, {"envFrom", {{{"secretRef", {{"name", "app-secret"}}}}}}}}}}}}}}}};
  if (!workloadAnnotations.is_null()) deploy["metadata"]["annotations"] = workloadAnnotations;
  if (!templateAnnotations.is_null())
    deploy["spec"]["template"]["metadata"]["annotations"] = templateAnnotations;
  return deploy;
}

ObjectState present(std::string uid, std::string rv, bool match = false, bool ignore = false) {
  ObjectState state = ObjectState::present(std::move(uid), std::move(rv), false);
  state.reloaderMatch = match;
  state.reloaderIgnore = ignore;
  return state;
}

struct Table {
  std::map<std::pair<RefKind, std::string>, ObjectState> objects;
  mutable std::vector<std::string> looked;

  ObjectLookup fn() const {
    return [this](RefKind kind, const std::string& name) {
      looked.push_back(std::string(refKindName(kind)) + "/" + name);
      auto it = objects.find({kind, name});
      return it == objects.end() ? ObjectState::absent() : it->second;
    };
  }
};

Table both(bool cmMatch = false, bool secretMatch = false) {
  Table table;
  table.objects[{RefKind::ConfigMap, "app-config"}] = present("cm-uid", "10", cmMatch);
  table.objects[{RefKind::Secret, "app-secret"}] = present("s-uid", "20", secretMatch);
  return table;
}

DesiredAnnotations desired(const json& w, const Table& table, const SelectionOptions& options = kReloader) {
  DesiredOptions desiredOptions;
  desiredOptions.selection = options;
  auto result = desiredAnnotations(w, table.fn(), desiredOptions);
  if (!result) FAIL(result.error().describe());
  return *result;
}

const ReferenceStatus& statusOf(const DesiredAnnotations& d, RefKind kind, const std::string& name) {
  for (const ReferenceStatus& status : d.references) {
    if (status.ref.kind == kind && status.ref.name == name) return status;
  }
  FAIL("no reference " << name);
  return d.references.front();
}

const std::string kCm = "configmap.restarter.stackable.tech/app-config";
const std::string kSecret = "secret.restarter.stackable.tech/app-secret";

}  // namespace

TEST_CASE("without --reloader-annotations Reloader's annotations manage nothing", "[reloader]") {
  const json w = workload({{"reloader.stakater.com/auto", "true"}});
  CHECK(workloadManagement(w, SelectionOptions{}).by == ManagedBy::None);
  CHECK(workloadManagement(w, SelectionOptions{false, true}).by == ManagedBy::None);
  CHECK(workloadManagement(w, kReloader).by == ManagedBy::Reloader);
  CHECK(workloadManagement(workload(), kReloader).by == ManagedBy::None);
}

TEST_CASE("the restarter label wins and keeps restarter's rules", "[reloader]") {
  json w = workload({{"reloader.stakater.com/search", "true"}});
  w["metadata"]["labels"] = {{"restarter.stackable.tech/enabled", "true"}};
  const Management m = workloadManagement(w, kReloader);
  CHECK(m.by == ManagedBy::Label);
  CHECK(m.reason == "label restarter.stackable.tech/enabled=true");
  // Everything referenced is tracked, match or not.
  const auto d = desired(w, both());
  CHECK(d.annotations == AnnotationMap{{kCm, "cm-uid/10"}, {kSecret, "s-uid/20"}});
  CHECK(statusOf(d, RefKind::ConfigMap, "app-config").selection.empty());
}

TEST_CASE("the label enabled=false opts out whatever Reloader's annotations say", "[reloader]") {
  json w = workload({{"reloader.stakater.com/auto", "true"}});
  w["metadata"]["labels"] = {{"restarter.stackable.tech/enabled", "false"}};
  CHECK(workloadManagement(w, kReloaderAll).by == ManagedBy::None);
  w["metadata"]["labels"] = {{"restarter.stackable.tech/enabled", "no"}};
  CHECK(workloadManagement(w, kReloader).by == ManagedBy::Reloader);
}

TEST_CASE("reloader.stakater.com/auto tracks every referenced object", "[reloader]") {
  for (const char* value : {"true", "True", "1", "t", "TRUE"}) {
    const json w = workload({{"reloader.stakater.com/auto", value}});
    CHECK(workloadManagement(w, kReloader).reason == "reloader.stakater.com/auto");
    const auto d = desired(w, both());
    CHECK(d.annotations == AnnotationMap{{kCm, "cm-uid/10"}, {kSecret, "s-uid/20"}});
    CHECK(statusOf(d, RefKind::Secret, "app-secret").selection == "reloader.stakater.com/auto");
  }
  for (const char* value : {"false", "yes", "", "on"}) {
    CHECK(workloadManagement(workload({{"reloader.stakater.com/auto", value}}), kReloader).by ==
          ManagedBy::None);
  }
}

TEST_CASE("typed auto annotations track one kind and freeze the other", "[reloader]") {
  const json w = workload({{"configmap.reloader.stakater.com/auto", "true"}}, {{kSecret, "s-uid/5"}});
  CHECK(workloadManagement(w, kReloader).reason == "configmap.reloader.stakater.com/auto");
  const Table table = both();
  const auto d = desired(w, table);
  // The Secret keeps what the template has (an old version), and is not even looked up.
  CHECK(d.annotations == AnnotationMap{{kCm, "cm-uid/10"}, {kSecret, "s-uid/5"}});
  const ReferenceStatus& secret = statusOf(d, RefKind::Secret, "app-secret");
  CHECK(secret.disposition == Disposition::NotSelected);
  CHECK(secret.selection == "no Reloader annotation selects secrets");
  CHECK(table.looked == std::vector<std::string>{"configmap/app-config"});

  const auto s = desired(workload({{"secret.reloader.stakater.com/auto", "true"}}), both());
  CHECK(s.annotations == AnnotationMap{{kSecret, "s-uid/20"}});
}

TEST_CASE("search tracks only referenced objects annotated match", "[reloader]") {
  const json w = workload({{"reloader.stakater.com/search", "true"}});
  CHECK(workloadManagement(w, kReloader).reason == "reloader.stakater.com/search");
  const auto d = desired(w, both(false, true));
  CHECK(d.annotations == AnnotationMap{{kSecret, "s-uid/20"}});
  const ReferenceStatus& cm = statusOf(d, RefKind::ConfigMap, "app-config");
  CHECK(cm.disposition == Disposition::NotSelected);
  CHECK(cm.selection == "reloader.stakater.com/search: the object lacks reloader.stakater.com/match");
  CHECK(statusOf(d, RefKind::Secret, "app-secret").selection ==
        "reloader.stakater.com/search and the object's reloader.stakater.com/match");
  // Only "true" exactly, on both sides.
  CHECK(workloadManagement(workload({{"reloader.stakater.com/search", "True"}}), kReloader).by ==
        ManagedBy::None);
}

TEST_CASE("gaining or losing match changes no annotation by itself", "[reloader]") {
  const json w = workload({{"reloader.stakater.com/search", "true"}}, {{kCm, "cm-uid/7"}});
  // The ConfigMap loses match: its value stays frozen at what the template holds.
  auto d = desired(w, both(false, false));
  CHECK(d.annotations == AnnotationMap{{kCm, "cm-uid/7"}});
  auto plan = planAnnotationChanges(w, d);
  REQUIRE(plan);
  CHECK(plan->empty());
  // Without a value in the template, none is added.
  d = desired(workload({{"reloader.stakater.com/search", "true"}}), both(false, false));
  CHECK(d.annotations.empty());
}

TEST_CASE("a search workload does not track an absent object", "[reloader]") {
  const json w = workload({{"reloader.stakater.com/search", "true"}}, {{kCm, "cm-uid/7"}});
  Table table;  // both absent
  const auto d = desired(w, table);
  CHECK(d.annotations == AnnotationMap{{kCm, "cm-uid/7"}});
  CHECK(statusOf(d, RefKind::ConfigMap, "app-config").selection ==
        "reloader.stakater.com/search: the object is absent");
}

TEST_CASE("reload lists name objects referenced or not", "[reloader]") {
  const json w = workload({{"configmap.reloader.stakater.com/reload", " other-config , app-config,"}});
  CHECK(workloadManagement(w, kReloader).reason == "configmap.reloader.stakater.com/reload");
  Table table = both();
  table.objects[{RefKind::ConfigMap, "other-config"}] = present("o-uid", "3");
  const auto d = desired(w, table);
  CHECK(d.annotations ==
        AnnotationMap{{kCm, "cm-uid/10"}, {"configmap.restarter.stackable.tech/other-config", "o-uid/3"}});
  CHECK(statusOf(d, RefKind::ConfigMap, "other-config").selection ==
        "listed in configmap.reloader.stakater.com/reload (not referenced by the pod spec)");
  // Named on purpose: required, so one created after its running workload goes into the baseline.
  CHECK_FALSE(statusOf(d, RefKind::ConfigMap, "other-config").ref.optional);
  CHECK(statusOf(d, RefKind::ConfigMap, "app-config").selection ==
        "listed in configmap.reloader.stakater.com/reload");
  // The Secret is referenced but not listed.
  CHECK(statusOf(d, RefKind::Secret, "app-secret").selection == "no Reloader annotation selects secrets");
  // References stay sorted by (kind, name).
  REQUIRE(d.references.size() == 3);
  CHECK(d.references[0].ref.name == "app-config");
  CHECK(d.references[1].ref.name == "other-config");
  CHECK(d.references[2].ref.name == "app-secret");

  auto tracked = trackedReferences(w, kReloader);
  REQUIRE(tracked);
  CHECK(tracked->size() == 3);
  auto plain = trackedReferences(w, SelectionOptions{});
  REQUIRE(plain);
  CHECK(plain->size() == 2);
}

TEST_CASE("a listed object that does not exist gets no annotation as under the label", "[reloader]") {
  const json w = workload({{"secret.reloader.stakater.com/reload", "missing"}});
  const auto d = desired(w, both());
  CHECK(statusOf(d, RefKind::Secret, "missing").disposition == Disposition::Absent);
  CHECK(d.annotations.empty());
}

TEST_CASE("reload list entries that are not names select nothing", "[reloader]") {
  const json w = workload({{"configmap.reloader.stakater.com/reload", "app-.*,Bad_Name,..,a..b"}});
  const ReloaderRules rules = reloaderRules(w, false);
  CHECK(rules.configMaps.listed.empty());
  CHECK(rules.configMaps.unusable == std::vector<std::string>{"app-.*", "Bad_Name", "..", "a..b"});
  CHECK(workloadManagement(w, kReloader).by == ManagedBy::None);
}

TEST_CASE("reloader.stakater.com/ignore on an object beats every rule", "[reloader]") {
  Table table = both();
  table.objects[{RefKind::ConfigMap, "app-config"}] = present("cm-uid", "10", true, true);
  for (const json& annotations : {json{{"reloader.stakater.com/auto", "true"}},
                                  json{{"configmap.reloader.stakater.com/reload", "app-config"}},
                                  json{{"reloader.stakater.com/search", "true"}}}) {
    const auto d = desired(workload(annotations, {{kCm, "cm-uid/4"}}), table);
    const ReferenceStatus& cm = statusOf(d, RefKind::ConfigMap, "app-config");
    CHECK(cm.disposition == Disposition::NotSelected);
    CHECK(cm.selection == "reloader.stakater.com/ignore on the object");
    CHECK(cm.value == "cm-uid/4");
  }
}

TEST_CASE("exclude lists on the workload's metadata beat the reload list and auto", "[reloader]") {
  const json w = workload({{"reloader.stakater.com/auto", "true"},
                           {"configmaps.exclude.reloader.stakater.com/reload", "app-config"},
                           {"secret.reloader.stakater.com/reload", "app-secret"},
                           {"secrets.exclude.reloader.stakater.com/reload", "x, app-secret"}});
  const Table table = both();
  const auto d = desired(w, table);
  CHECK(d.annotations.empty());
  CHECK(statusOf(d, RefKind::ConfigMap, "app-config").selection ==
        "excluded by configmaps.exclude.reloader.stakater.com/reload");
  CHECK(table.looked.empty());
}

TEST_CASE("the flag auto-reload-all selects every workload but those with auto false", "[reloader]") {
  const Management m = workloadManagement(workload(), kReloaderAll);
  CHECK(m.by == ManagedBy::Reloader);
  CHECK(m.reason == "--auto-reload-all");
  CHECK(workloadManagement(workload({{"reloader.stakater.com/auto", "false"}}), kReloaderAll).by ==
        ManagedBy::None);
  // Any value set (even one Go does not parse) opts out, as in Reloader.
  CHECK(workloadManagement(workload({{"reloader.stakater.com/auto", "nope"}}), kReloaderAll).by ==
        ManagedBy::None);
  // An empty value counts as unset.
  CHECK(workloadManagement(workload({{"reloader.stakater.com/auto", ""}}), kReloaderAll).by ==
        ManagedBy::Reloader);
  // A typed "false" opts that kind out only.
  const json cmOff = workload({{"configmap.reloader.stakater.com/auto", "false"}});
  const auto d = desired(cmOff, both(), kReloaderAll);
  CHECK(d.annotations == AnnotationMap{{kSecret, "s-uid/20"}});
}

TEST_CASE("auto false still lets the reload list and search select", "[reloader]") {
  const json w = workload(
      {{"reloader.stakater.com/auto", "false"}, {"configmap.reloader.stakater.com/reload", "app-config"}});
  const auto d = desired(w, both(), kReloaderAll);
  CHECK(d.annotations == AnnotationMap{{kCm, "cm-uid/10"}});
}

TEST_CASE("the pod template's annotations count when the metadata has none for the kind", "[reloader]") {
  const json w = workload(nullptr, {{"reloader.stakater.com/auto", "true"}});
  CHECK(workloadManagement(w, kReloader).reason == "reloader.stakater.com/auto");
  CHECK(reloaderRules(w, false).configMaps.fromTemplate);
  // The metadata's own rule for a kind hides the template's for that kind only.
  const json mixed = workload({{"secret.reloader.stakater.com/reload", "app-secret"}},
                              {{"reloader.stakater.com/search", "true"}});
  const ReloaderRules rules = reloaderRules(mixed, false);
  CHECK_FALSE(rules.secrets.fromTemplate);
  CHECK_FALSE(rules.secrets.search);
  CHECK(rules.configMaps.fromTemplate);
  CHECK(rules.configMaps.search);
  // Exclude lists are read from the metadata only.
  const json excludedInTemplate = workload({{"reloader.stakater.com/auto", "true"}},
                                           {{"configmaps.exclude.reloader.stakater.com/reload", "app-config"}});
  CHECK(reloaderRules(excludedInTemplate, false).configMaps.excluded.empty());
}

TEST_CASE("restarter's own ignore rules still apply under Reloader's annotations", "[reloader]") {
  const json w = workload(
      {{"reloader.stakater.com/auto", "true"}, {"restarter.stackable.tech/ignore-configmap.0", "app-config"}});
  const auto d = desired(w, both());
  CHECK(statusOf(d, RefKind::ConfigMap, "app-config").disposition == Disposition::IgnoredByAnnotation);
}

TEST_CASE("Reloader's last-reloaded-from is not restarter's and stays untouched", "[reloader]") {
  const json w = workload({{"reloader.stakater.com/auto", "true"}},
                          {{"reloader.stakater.com/last-reloaded-from", "{\"type\":\"CONFIGMAP\"}"}});
  auto plan = planAnnotationChanges(w, desired(w, both()));
  REQUIRE(plan);
  for (const AnnotationChange& change : *plan) CHECK(change.key != "reloader.stakater.com/last-reloaded-from");
}

TEST_CASE("an unknown state of a selectable object fails the computation", "[reloader]") {
  Table table = both();
  table.objects[{RefKind::ConfigMap, "app-config"}] = ObjectState::unknown("timeout");
  DesiredOptions options;
  options.selection = kReloader;
  CHECK_FALSE(desiredAnnotations(workload({{"reloader.stakater.com/search", "true"}}), table.fn(), options));
}

TEST_CASE("Go's ParseBool spellings", "[reloader]") {
  CHECK(parseGoBool("T") == true);
  CHECK(parseGoBool("0") == false);
  CHECK(parseGoBool("False") == false);
  CHECK_FALSE(parseGoBool("yes").has_value());
  CHECK_FALSE(parseGoBool("").has_value());
}

TEST_CASE("object states carry Reloader's match and ignore annotations", "[reloader]") {
  auto state = objectStateFromMetadata(
      {{"uid", "u"},
       {"resourceVersion", "1"},
       {"annotations", {{"reloader.stakater.com/match", "true"}, {"reloader.stakater.com/ignore", "True"}}}});
  REQUIRE(state);
  CHECK(state->reloaderMatch);
  CHECK_FALSE(state->reloaderIgnore);
}
