#pragma once
// restarter::kube — the Kubernetes API client used by the controller, the webhook and the kubectl
// plugin.
//
//   config.hpp     kubeconfig / in-cluster resolution (kubectl's rules)
//   auth.hpp       per-request credentials: token, token file, client certificate, exec plugin
//   transport.hpp  the HTTP seam and its libcurl implementation
//   errors.hpp     metav1.Status -> core::Error kinds (NotFound, Conflict, Gone, ...)
//   resource.hpp   API paths
//   watch.hpp      watch stream decoding
//   client.hpp     this file: typed operations
//
// Contracts: every operation returns a value or a core::Error, never throws; outside input
// (malformed JSON, wrong types, truncated streams) is an error. A Client is thread-safe: any
// number of threads may call it at once (each request takes its own pooled connection).
// Namespaces: `namespace_` empty means all namespaces for list/watch, and must be empty for
// cluster-scoped resources.
//
// Metadata-only (`metadataOnly`): asks for `PartialObjectMetadata(List)` by content negotiation
// (Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1) WITHOUT a fallback
// to full objects, and checks the answer's kind, so Secret data never crosses the wire
// (docs/architecture.md, "Metadata only").
//
// 401: the authenticator is told (auth.hpp) and the request is retried once with fresh
// credentials. Nothing else is retried here: the caller's error policy decides (see retryAfter()).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/base/clock.hpp"
#include "restarter/core/result.hpp"
#include "restarter/kube/auth.hpp"
#include "restarter/kube/config.hpp"
#include "restarter/kube/errors.hpp"
#include "restarter/kube/resource.hpp"
#include "restarter/kube/transport.hpp"
#include "restarter/kube/watch.hpp"

namespace restarter::kube {

using nlohmann::json;

struct GetOptions {
  bool metadataOnly = false;
};

struct ListOptions {
  std::string labelSelector;
  std::string fieldSelector;
  bool metadataOnly = false;
  std::int64_t limit = 500;     // page size; 0: no paging (client-go's pager default is 500)
  std::string continueToken;    // listPage only
  std::string resourceVersion;  // "" = most recent (quorum read)
};

struct ListPage {
  std::vector<json> items;
  std::string resourceVersion;
  std::string continueToken;  // empty on the last page
};

struct ObjectList {
  std::vector<json> items;
  std::string resourceVersion;  // of the whole list: where a watch resumes
};

struct WatchOptions {
  std::string resourceVersion;  // resume point; "" = start at the most recent
  std::string labelSelector;
  std::string fieldSelector;
  bool metadataOnly = false;
  bool allowBookmarks = true;
  // A streaming list (the apiserver's WatchList): the stream starts with an ADDED event for every
  // object as of `resourceVersion` or later (resourceVersionMatch=NotOlderThan; "" = the most
  // recent, a consistent read), then a BOOKMARK annotated kInitialEventsEndAnnotation = "true",
  // then changes as any watch. Needs allowBookmarks. An apiserver without the feature answers 422
  // (InvalidInput) before any event.
  bool sendInitialEvents = false;
  // Server-side end of the stream; client-go picks 5-10 minutes. The caller re-watches.
  std::chrono::seconds timeout{std::chrono::minutes(5)};
};

// The annotation of the bookmark that ends a streaming list's initial events.
inline constexpr const char* kInitialEventsEndAnnotation = "k8s.io/initial-events-end";

struct WatchEnd {
  bool stopped = false;  // true when the handler or the stop token ended it
};

// Return false to stop watching.
using WatchHandler = std::function<bool(WatchEvent&& event)>;

struct WriteOptions {
  bool dryRun = false;  // ?dryRun=All
  std::string fieldManager;
};

struct ApplyOptions {
  std::string fieldManager;  // required by the server for apply
  bool force = false;        // take ownership of conflicting fields
  bool dryRun = false;
};

struct DeleteOptions {
  std::optional<std::string> uid;              // precondition
  std::optional<std::string> resourceVersion;  // precondition
  std::string propagationPolicy;               // "", "Foreground", "Background", "Orphan"
  std::optional<std::int64_t> gracePeriodSeconds;
  bool dryRun = false;
};

struct ObjectReference {
  std::string apiVersion;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
};

// An events.k8s.io/v1 Event. `eventTime` is set from the Client's clock.
struct EventRecord {
  std::string namespace_;  // where the Event lives (the regarding object's namespace)
  ObjectReference regarding;
  std::string type = "Normal";      // or "Warning"
  std::string reason;               // UpperCamelCase, e.g. "Restarted"
  std::string action;               // e.g. "Restart"
  std::string note;                 // human readable, at most 1 kB (truncated)
  std::string reportingController;  // e.g. "restarter.stackable.tech/controller"
  std::string reportingInstance;
};

// A coordination.k8s.io/v1 Lease's spec, plus the resourceVersion it was read at.
struct LeaseRecord {
  std::string name;
  std::string namespace_;
  std::string holderIdentity;
  std::int64_t leaseDurationSeconds = 0;
  std::string acquireTime;  // RFC 3339 with microseconds, as the API wants (MicroTime)
  std::string renewTime;
  std::int64_t leaseTransitions = 0;
  std::string resourceVersion;  // "" when creating
};

class Client {
 public:
  // `clock` must outlive the Client.
  Client(std::unique_ptr<Transport> transport, std::unique_ptr<Authenticator> auth,
         std::string defaultNamespace, base::Clock& clock);

  // The production wiring: libcurl transport, authenticator from the config, system clock and
  // process runner.
  static core::Result<std::unique_ptr<Client>> create(const ConnectionConfig& config,
                                                      const TransportOptions& options = {});
  // loadConfig(load) then create(): the one call for a command that needs one client. Errors
  // name the kubeconfig file, context or field (from loadConfig) or the client set-up.
  static core::Result<std::unique_ptr<Client>> connect(const LoadOptions& load,
                                                       const TransportOptions& options = {});

  const std::string& defaultNamespace() const { return defaultNamespace_; }
  base::Clock& clock() const { return clock_; }

  core::Result<json> get(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                         const GetOptions& options = {});
  core::Result<ListPage> listPage(const ResourceRef& ref, std::string_view namespace_,
                                  const ListOptions& options);
  // Every page. A 410 on a continue token (the snapshot expired) is Gone: list again.
  core::Result<ObjectList> list(const ResourceRef& ref, std::string_view namespace_,
                                const ListOptions& options = {});
  // Streams events to `handler` until the server ends the stream (OK), the handler or `stop`
  // ends it (OK, stopped), or something fails: Gone (HTTP 410 or an ERROR event with code 410:
  // relist), InvalidInput (malformed event, stream cut mid-object), transport errors.
  core::Result<WatchEnd> watch(const ResourceRef& ref, std::string_view namespace_, const WatchOptions& options,
                               const WatchHandler& handler, std::stop_token stop = {});

  core::Result<json> create(const ResourceRef& ref, std::string_view namespace_, const json& object,
                            const WriteOptions& options = {});
  // PUT: optimistic concurrency through metadata.resourceVersion (Conflict when stale).
  core::Result<json> replace(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                             const json& object, const WriteOptions& options = {});
  // Server-side apply (application/apply-patch+yaml; JSON is YAML). `object` must carry
  // apiVersion, kind and metadata.name. Conflict (with the managers in the message) unless force.
  core::Result<json> apply(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                           const json& object, const ApplyOptions& options);
  core::Result<json> jsonPatch(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                               const json& patch, const WriteOptions& options = {});
  core::Result<json> mergePatch(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                                const json& patch, const WriteOptions& options = {});
  // POST to a subresource, e.g. serviceaccounts/<name>/token (TokenRequest).
  core::Result<json> createSubresource(const ResourceRef& ref, std::string_view namespace_,
                                       std::string_view name, std::string_view subresource, const json& body);
  core::Status remove(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                      const DeleteOptions& options = {});
  // policy/v1 Eviction of a pod. TooManyRequests when a PodDisruptionBudget refuses it.
  core::Status evict(std::string_view namespace_, std::string_view podName, const DeleteOptions& options = {});

  core::Result<json> createEvent(const EventRecord& event);

  core::Result<LeaseRecord> getLease(std::string_view namespace_, std::string_view name);
  core::Result<LeaseRecord> createLease(const LeaseRecord& lease);
  // PUT with lease.resourceVersion: Conflict when someone else updated it first.
  core::Result<LeaseRecord> updateLease(const LeaseRecord& lease);

  // A GET of an arbitrary path (e.g. "/readyz"); the body as text. Errors as for other calls.
  core::Result<std::string> getRaw(std::string_view path);

 private:
  core::Result<Response> execute(Request request);
  core::Result<json> executeJson(Request request);
  core::Result<json> write(const std::string& method, std::string path, const json& body,
                           const std::string& contentType, const std::string& query);

  std::unique_ptr<Transport> transport_;
  std::unique_ptr<Authenticator> auth_;
  std::string defaultNamespace_;
  base::Clock& clock_;
};

// Lease <-> JSON (exposed for tests).
json leaseToJson(const LeaseRecord& lease);
core::Result<LeaseRecord> leaseFromJson(const json& object);

}  // namespace restarter::kube
