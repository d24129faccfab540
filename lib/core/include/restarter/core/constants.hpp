#pragma once
// Every label and annotation key that restarter reads or writes, in one place. These are the
// compatibility contract with commons-operator (docs/architecture.md, "Annotation contract"): changing
// them restarts every managed workload in every cluster, so they never change.

#include <string_view>

namespace restarter::core {

// Label on a workload (and on Pods) that opts it in.
inline constexpr std::string_view kEnabledLabel = "restarter.stackable.tech/enabled";
inline constexpr std::string_view kEnabledLabelValue = "true";
inline constexpr std::string_view kEnabledSelector = "restarter.stackable.tech/enabled=true";

// Label on a ConfigMap or Secret whose changes never restart anything.
inline constexpr std::string_view kIgnoreLabel = "restarter.stackable.tech/ignore";
inline constexpr std::string_view kIgnoreLabelValue = "true";

// Annotation key prefixes on a workload: the value names one ConfigMap/Secret to ignore; whatever
// follows the prefix only makes the key unique.
inline constexpr std::string_view kIgnoreConfigMapAnnotationPrefix =
    "restarter.stackable.tech/ignore-configmap.";
inline constexpr std::string_view kIgnoreSecretAnnotationPrefix = "restarter.stackable.tech/ignore-secret.";

// Pod-template annotation key prefixes (DNS-subdomain prefix of the key, without the slash).
inline constexpr std::string_view kConfigMapAnnotationPrefix = "configmap.restarter.stackable.tech";
inline constexpr std::string_view kSecretAnnotationPrefix = "secret.restarter.stackable.tech";

// Value commons-operator (main branch) writes for a missing or ignored object. We never write it,
// but keep it where we find it so that a migrated cluster sees no write (see annotations.hpp).
inline constexpr std::string_view kLegacyChangesIgnoredValue = "changes-ignored";

// Pod annotation key prefix: the value is an RFC 3339 time at which the pod must be evicted.
inline constexpr std::string_view kExpiresAtAnnotationPrefix = "restarter.stackable.tech/expires-at.";

// Workload metadata annotation (not pod template: writing it restarts nothing): when restarter
// last rolled the workload, RFC 3339 in UTC; what serve-controller --min-rollout-interval measures
// from (rollout.hpp). restarter's own, not commons-operator's: it is written only together with a
// rollout, so a migrated cluster still sees no write, and commons-operator ignores it.
inline constexpr std::string_view kLastRolloutAnnotation = "restarter.stackable.tech/last-rollout";

// Workload metadata annotation: whether restarter rolls a pending change itself ("auto", the
// default) or only records and explains it ("manual"): someone then rolls it with `restarter roll`
// (rollout_mode.hpp; docs/behaviour.md, "Manual mode and roll"). Any other value counts as "auto"
// and is warned about.
inline constexpr std::string_view kRolloutModeAnnotation = "restarter.stackable.tech/rollout";
inline constexpr std::string_view kRolloutModeManualValue = "manual";
inline constexpr std::string_view kRolloutModeAutoValue = "auto";
// Workload metadata annotation, set by its owner: when a rollout may start (rollout_window.hpp;
// docs/behaviour.md, "Rollout windows"), e.g. "Mon-Fri 02:00-04:00 Europe/Berlin"; "always" opts
// out of serve-controller's --rollout-window. A change outside every window is held until the next
// opening; an invalid value holds nothing (a Warning Event says why).
inline constexpr std::string_view kRolloutWindowAnnotation = "restarter.stackable.tech/rollout-window";
// Workload metadata annotation, set by the owner: the workload's place in the fleet-wide rollout
// queue (serve-controller --max-concurrent-rollouts; rollout_queue.hpp). A decimal integer, higher
// first, default 0; anything else is priority 0 and one Warning Event.
inline constexpr std::string_view kRolloutPriorityAnnotation = "restarter.stackable.tech/rollout-priority";

// Workload metadata annotation (not pod template: writing it restarts nothing): when the
// controller first queued the workload's pending rollout for a slot (--max-concurrent-rollouts),
// RFC 3339 in UTC. Written by a metadata-only apply of the controller's field manager and removed
// by the apply that rolls the workload; a new leader rebuilds the queue's order from it.
inline constexpr std::string_view kQueuedSinceAnnotation = "restarter.stackable.tech/queued-since";

// Workload metadata annotation (not pod template: writing it restarts nothing): the content digest
// of each tracked reference at the version its template annotation holds (content.hpp). restarter's
// own: written only together with a template change, so a migrated cluster still sees no write.
inline constexpr std::string_view kContentDigestsAnnotation = "restarter.stackable.tech/content-digests";

// Workload metadata annotation (not pod template: writing it restarts nothing): the versions the
// pods run with for references whose template annotation restarter has not written yet, because
// writing it would have restarted pods that did not need it (a workload opted in while running, an
// object created after its workload; baseline.hpp). restarter's own; commons-operator ignores it.
inline constexpr std::string_view kBaselineAnnotation = "restarter.stackable.tech/baseline";

// Workload metadata annotation: `manual` opts an OnDelete StatefulSet or DaemonSet out of the
// pod-by-pod roll (ondelete.hpp): restarter then only annotates the template, and explain-restart
// lists the pods still on the old revision. Any other value, or none, lets restarter roll.
inline constexpr std::string_view kOnDeleteAnnotation = "restarter.stackable.tech/ondelete";
inline constexpr std::string_view kOnDeleteManualValue = "manual";

// Field managers for the server-side applies restarter makes, one per workload kind. The
// StatefulSet one is commons-operator's own: taking over its manager name means that after a
// migration we own the annotation fields it owned, so a key we stop sending is really removed
// (with a different manager, commons-operator's stale ownership would keep it alive).
inline constexpr std::string_view kStatefulSetFieldManager = "restarter.stackable.tech/statefulset";
inline constexpr std::string_view kDeploymentFieldManager = "restarter.stackable.tech/deployment";
inline constexpr std::string_view kDaemonSetFieldManager = "restarter.stackable.tech/daemonset";
inline constexpr std::string_view kRolloutFieldManager = "restarter.stackable.tech/rollout";

// Reloader's annotations (stakater/Reloader, internal/pkg/options/flags.go defaults), read with
// --reloader-annotations (reloader.hpp; docs/architecture.md, "Reloader annotations"). Restarter
// never writes them. On a workload (metadata, or the pod template's when the metadata has none):
inline constexpr std::string_view kReloaderAutoAnnotation = "reloader.stakater.com/auto";
inline constexpr std::string_view kReloaderConfigMapAutoAnnotation = "configmap.reloader.stakater.com/auto";
inline constexpr std::string_view kReloaderSecretAutoAnnotation = "secret.reloader.stakater.com/auto";
inline constexpr std::string_view kReloaderSearchAnnotation = "reloader.stakater.com/search";
inline constexpr std::string_view kReloaderConfigMapReloadAnnotation = "configmap.reloader.stakater.com/reload";
inline constexpr std::string_view kReloaderSecretReloadAnnotation = "secret.reloader.stakater.com/reload";
// On a workload's metadata only: comma-separated names never selected.
inline constexpr std::string_view kReloaderConfigMapExcludeAnnotation =
    "configmaps.exclude.reloader.stakater.com/reload";
inline constexpr std::string_view kReloaderSecretExcludeAnnotation =
    "secrets.exclude.reloader.stakater.com/reload";
// On a ConfigMap or Secret: "true" makes it eligible under reloader.stakater.com/search, and
// "true" on the other never lets it trigger anything.
inline constexpr std::string_view kReloaderMatchAnnotation = "reloader.stakater.com/match";
inline constexpr std::string_view kReloaderIgnoreAnnotation = "reloader.stakater.com/ignore";
// What Reloader's annotation strategy writes into a pod template; restarter leaves it alone.
inline constexpr std::string_view kReloaderLastReloadedFromAnnotation =
    "reloader.stakater.com/last-reloaded-from";

}  // namespace restarter::core
