#pragma once
// An in-memory Kubernetes API server behind kube::Transport, for unit tests that drive the real
// kube::Client (docs/architecture.md, "Testing"): tests seed objects, run the code under test,
// and assert on the objects and Events it left, not on the requests it sent.
//
// What it serves, as the apiserver does for these cases:
//   - paths /api/v1/... and /apis/GROUP/VERSION/..., namespaced (namespaces/NS/RESOURCE[/NAME])
//     or not, and the subresources status (read and written as the object) and pods' eviction
//     (deletes the pod);
//   - GET, LIST (one page; labelSelector of `k=v`, `k==v`, `k!=v`, `k` and `!k` terms; metadata
//     only when the Accept header asks for PartialObjectMetadata), WATCH (every change after the
//     resourceVersion asked for (none or "0": from now on), then each new one until the client
//     stops or endWatches(); an ERROR event with 410 Gone below compact()'s mark; no progress
//     bookmarks), and streaming lists (a WATCH with sendInitialEvents=true: every object as
//     ADDED, the bookmark that ends them, then the watch);
//   - POST (create: 409 AlreadyExists; metadata.generateName), PUT (replace: 404, 409 Conflict on
//     a stale metadata.resourceVersion), PATCH as JSON Patch (RFC 6902; a failed `test` is 409,
//     as for the apiserver's precondition failures; another failure 422), merge patch (RFC 7386)
//     and apply (a merge patch that creates a missing object: no field ownership), DELETE (404,
//     409 on failed uid/resourceVersion preconditions); `dryRun=All` answers without storing.
//   - discovery of a group version (GET /api/v1, GET /apis/GROUP/VERSION): an APIResourceList of
//     the resources install()ed in it, 404 while none is, as for a custom resource whose
//     CustomResourceDefinition is not installed (built-in resources too are listed only once
//     installed; their objects are served either way);
//   - every write gives a new resourceVersion (one counter for all objects), a create gives a uid
//     and generation 1, a change of `spec` raises the generation; a write naming another
//     metadata.uid than the object's is 409 Conflict (the apiserver's uid precondition).
// Not served: pagination, fieldSelector, strategic merge patch, admission, finalizers.
//
// Thread-safety: every member function may be called from any thread; one mutex guards the
// objects, the change log and the request log, and watches wait on its condition variable.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/kube/client.hpp"
#include "restarter/kube/resource.hpp"
#include "restarter/kube/transport.hpp"

namespace restarter::testing {

class FakeApiServer final : public kube::Transport {
 public:
  // Answers a request before the server does when it returns a Response (an injected failure, a
  // 503, a slow path); std::nullopt lets the server answer. Called without the lock held.
  using Interceptor = std::function<std::optional<kube::Response>(const kube::Request&)>;

  FakeApiServer();
  ~FakeApiServer() override;

  // Stores `object` (its apiVersion, kind, metadata.name and, when `ref` is namespaced,
  // metadata.namespace) as a create would, without a request, keeping its metadata.uid when it
  // has one; returns it as stored.
  nlohmann::json seed(const kube::ResourceRef& ref, nlohmann::json object);
  // Stores `object` as another writer would, without a request: a replace (the stored uid kept, no
  // resourceVersion precondition) when one of its name is stored, else a create as seed() does.
  // Returns it as stored.
  nlohmann::json put(const kube::ResourceRef& ref, nlohmann::json object);
  // Deletes the object as another writer would, without a request; false when none was stored.
  bool erase(const kube::ResourceRef& ref, std::string_view namespace_, std::string_view name);
  // The stored object, or std::nullopt.
  std::optional<nlohmann::json> object(const kube::ResourceRef& ref, std::string_view namespace_,
                                       std::string_view name) const;
  // Every stored object of `ref` (in `namespace_`, or all when empty), by namespace and name.
  std::vector<nlohmann::json> objects(const kube::ResourceRef& ref, std::string_view namespace_ = {}) const;
  // The stored events.k8s.io Events, in the order they were created.
  std::vector<nlohmann::json> events() const;
  // Every request received, in order.
  std::vector<kube::Request> requests() const;
  // How many of them were writes (POST, PUT, PATCH, DELETE), and how many server-side applies.
  std::size_t writes() const;
  std::size_t applies() const;
  // From now on discovery lists `ref` in its group version, as the apiserver does once the
  // CustomResourceDefinition defining it is established.
  void install(const kube::ResourceRef& ref);
  // Changes up to now are forgotten by watches: one from an older resourceVersion gets 410 Gone.
  void compact();
  // Ends every open watch (as the apiserver does at its timeout); later watches wait again.
  void endWatches();
  void setInterceptor(Interceptor interceptor);

  core::Result<kube::Response> send(const kube::Request& request) override;
  core::Result<kube::Response> stream(const kube::Request& request, const kube::ChunkHandler& onChunk,
                                      std::stop_token stop) override;

 private:
  struct Target;
  static Target targetOf(const kube::ResourceRef& ref, std::string_view namespace_, std::string_view name);
  struct Change {
    std::string collection;  // "group/resource"
    std::string namespace_;
    std::string type;  // ADDED, MODIFIED, DELETED
    nlohmann::json object;
    std::uint64_t resourceVersion = 0;
  };

  // Logs `request`; the interceptor's answer to it, if any (called without the lock held).
  std::optional<kube::Response> receive(const kube::Request& request);
  kube::Response serve(const kube::Request& request, const Target& target);
  kube::Response discovery(const std::string& groupVersion) const;
  kube::Response get(const Target& target, bool metadataOnly) const;
  kube::Response list(const Target& target, const std::string& labelSelector, bool metadataOnly) const;
  kube::Response create(const Target& target, nlohmann::json object, bool dryRun);
  kube::Response replace(const Target& target, nlohmann::json object, bool dryRun);
  kube::Response patch(const Target& target, const kube::Request& request, bool dryRun);
  kube::Response remove(const Target& target, const nlohmann::json& options, bool dryRun);
  kube::Response store(const Target& target, nlohmann::json object, bool created, bool dryRun);
  nlohmann::json* find(const Target& target);
  const nlohmann::json* find(const Target& target) const;

  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  // "group/resource" -> "namespace/name" -> object; std::map keeps lists in a stable order.
  std::map<std::string, std::map<std::string, nlohmann::json>> objects_;
  std::vector<Change> changes_;
  std::vector<nlohmann::json> events_;
  std::vector<kube::Request> requests_;
  // group version ("v1", "argoproj.io/v1alpha1") -> the resources install()ed in it.
  std::map<std::string, std::vector<kube::ResourceRef>> installed_;
  std::uint64_t resourceVersion_ = 1000;
  std::uint64_t compactedBelow_ = 0;
  std::uint64_t uids_ = 0;
  std::uint64_t watchGeneration_ = 0;
  Interceptor interceptor_;
};

// A kube::Client (no credentials) over a new FakeApiServer, and that server (owned by the client:
// valid while it lives). `clock` must outlive both.
struct FakeApi {
  FakeApiServer* server = nullptr;
  std::unique_ptr<kube::Client> client;
};
FakeApi connectFakeApi(base::Clock& clock, std::string defaultNamespace = "default");

}  // namespace restarter::testing
