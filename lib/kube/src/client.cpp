#include "restarter/kube/client.hpp"

#include <cstdio>
#include <cstring>

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/json_parse.hpp"
#include "restarter/core/text.hpp"

namespace restarter::kube {
namespace {

using core::ErrorKind;

// Content negotiation for metadata-only reads (docs/architecture.md, "Metadata only"). No fallback: a
// server that cannot serve PartialObjectMetadata answers 406 instead of sending full Secrets.
constexpr const char* kAcceptMetadata = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
constexpr const char* kAcceptMetadataList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
constexpr const char* kAcceptJson = "application/json";

// Extra time on the client side beyond a watch's server-side timeout before the exchange is
// considered hung (the server closes at timeoutSeconds; this only catches a silent peer).
constexpr auto kWatchClientSlack = std::chrono::seconds(30);

class Query {
 public:
  Query& add(std::string_view name, std::string_view value) {
    if (value.empty()) return *this;
    text_ += text_.empty() ? '?' : '&';
    text_ += name;
    text_ += '=';
    text_ += urlEncode(value);
    return *this;
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

core::Error malformed(const std::string& what) {
  return core::makeError(ErrorKind::InvalidInput, "malformed answer from the server: " + what);
}

core::Result<json> parseBody(const std::string& body) {
  auto doc = core::parseJson(body, core::JsonLimits{kMaxResponseBodyBytes, core::kMaxJsonDepth});
  if (!doc) return malformed("body: " + doc.error().message);
  if (!doc->is_object()) return malformed("body is not a JSON object");
  return doc;
}

std::string describeTarget(const ResourceRef& ref, std::string_view ns, std::string_view name) {
  std::string text = ref.plural;
  if (!name.empty())
    text += " " + std::string(ns.empty() ? "" : std::string(ns) + "/") + std::string(name);
  else if (!ns.empty())
    text += " in " + std::string(ns);
  return text;
}

}  // namespace

Client::Client(std::unique_ptr<Transport> transport, std::unique_ptr<Authenticator> auth,
               std::string defaultNamespace, base::Clock& clock)
    : transport_(std::move(transport)),
      auth_(std::move(auth)),
      defaultNamespace_(std::move(defaultNamespace)),
      clock_(clock) {}

core::Result<std::unique_ptr<Client>> Client::connect(const LoadOptions& load,
                                                      const TransportOptions& options) {
  auto config = loadConfig(load);
  if (!config) return std::move(config).error();
  return create(*config, options);
}

core::Result<std::unique_ptr<Client>> Client::create(const ConnectionConfig& config,
                                                     const TransportOptions& options) {
  auto transport = makeCurlTransport(config, options);
  if (!transport) return std::move(transport).error();
  return std::make_unique<Client>(std::move(transport).value(),
                                  makeAuthenticator(config, base::systemClock(), systemProcessRunner()),
                                  config.namespace_, base::systemClock());
}

core::Result<Response> Client::execute(Request request) {
  for (int attempt = 0;; ++attempt) {
    auto credential = auth_->credential();
    if (!credential) return std::move(credential).error();
    request.bearerToken = credential->bearerToken;
    request.clientCertPem = credential->clientCertPem;
    request.clientKeyPem = credential->clientKeyPem;
    auto response = transport_->send(request);
    if (!response) return response;
    if (response->status == 401 && attempt == 0 && auth_->invalidate(*credential)) continue;
    return response;
  }
}

core::Result<json> Client::executeJson(Request request) {
  std::string what = request.method + " " + request.path.substr(0, request.path.find('?'));
  auto response = execute(std::move(request));
  if (!response) return std::move(response).error().withContext(what);
  if (response->status < 200 || response->status > 299)
    return core::Result<json>(errorFromResponse(response->status, response->headers, response->body))
        .withContext(what);
  return parseBody(response->body).withContext(what);
}

core::Result<json> Client::get(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                               const GetOptions& options) {
  Request request;
  request.path = resourcePath(ref, namespace_, name);
  request.headers.emplace_back("Accept", options.metadataOnly ? kAcceptMetadata : kAcceptJson);
  auto object = executeJson(std::move(request));
  if (!object) return object;
  if (options.metadataOnly && core::stringAt(*object, {"kind"}) != "PartialObjectMetadata")
    return malformed("expected kind PartialObjectMetadata for " + describeTarget(ref, namespace_, name));
  return object;
}

core::Result<ListPage> Client::listPage(const ResourceRef& ref, std::string_view namespace_,
                                        const ListOptions& options) {
  Query query;
  query.add("labelSelector", options.labelSelector)
      .add("fieldSelector", options.fieldSelector)
      .add("limit", options.limit > 0 ? std::to_string(options.limit) : "")
      .add("continue", options.continueToken)
      .add("resourceVersion", options.resourceVersion);
  Request request;
  request.path = resourcePath(ref, namespace_) + query.str();
  request.headers.emplace_back("Accept", options.metadataOnly ? kAcceptMetadataList : kAcceptJson);
  auto doc = executeJson(std::move(request));
  if (!doc) return std::move(doc).error();
  std::string target = "list of " + describeTarget(ref, namespace_, {});
  if (options.metadataOnly && core::stringAt(*doc, {"kind"}) != "PartialObjectMetadataList")
    return malformed("expected kind PartialObjectMetadataList for the " + target);
  auto items = doc->find("items");
  ListPage page;
  if (items != doc->end() && !items->is_null()) {
    if (!items->is_array()) return malformed("\"items\" of the " + target + " is not an array");
    page.items.reserve(items->size());
    for (auto& item : *items) {
      if (!item.is_object()) return malformed("an item of the " + target + " is not an object");
      page.items.push_back(std::move(item));
    }
  }
  page.resourceVersion = core::metadataString(*doc, "resourceVersion");
  page.continueToken = core::metadataString(*doc, "continue");
  return page;
}

core::Result<ObjectList> Client::list(const ResourceRef& ref, std::string_view namespace_,
                                      const ListOptions& options) {
  ObjectList result;
  ListOptions pageOptions = options;
  pageOptions.continueToken.clear();
  for (;;) {
    auto page = listPage(ref, namespace_, pageOptions);
    if (!page) return std::move(page).error();
    if (result.items.empty())
      result.items = std::move(page->items);
    else
      result.items.insert(result.items.end(), std::make_move_iterator(page->items.begin()),
                          std::make_move_iterator(page->items.end()));
    result.resourceVersion = page->resourceVersion;
    if (page->continueToken.empty()) break;
    pageOptions.continueToken = page->continueToken;
    pageOptions.resourceVersion.clear();  // the continue token pins the snapshot
  }
  return result;
}

core::Result<WatchEnd> Client::watch(const ResourceRef& ref, std::string_view namespace_,
                                     const WatchOptions& options, const WatchHandler& handler,
                                     std::stop_token stop) {
  Query query;
  query.add("watch", "1")
      .add("allowWatchBookmarks", options.allowBookmarks ? "true" : "")
      .add("sendInitialEvents", options.sendInitialEvents ? "true" : "")
      .add("resourceVersionMatch", options.sendInitialEvents ? "NotOlderThan" : "")
      .add("resourceVersion", options.resourceVersion)
      .add("labelSelector", options.labelSelector)
      .add("fieldSelector", options.fieldSelector)
      .add("timeoutSeconds", std::to_string(options.timeout.count()));
  Request request;
  request.path = resourcePath(ref, namespace_) + query.str();
  request.headers.emplace_back("Accept", options.metadataOnly ? kAcceptMetadata : kAcceptJson);
  request.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options.timeout + kWatchClientSlack);
  std::string what = "watch " + describeTarget(ref, namespace_, {});

  for (int attempt = 0;; ++attempt) {
    auto credential = auth_->credential();
    if (!credential) return std::move(credential).error();
    request.bearerToken = credential->bearerToken;
    request.clientCertPem = credential->clientCertPem;
    request.clientKeyPem = credential->clientKeyPem;

    WatchDecoder decoder;
    std::optional<core::Error> failure;
    bool handlerStopped = false;
    auto onChunk = [&](std::string_view chunk) {
      auto status = decoder.feed(chunk, [&](WatchEvent&& event) {
        if (event.type == WatchEvent::Type::Error) {
          failure = errorFromStatusObject(event.object.dump());
          return false;
        }
        if (options.metadataOnly && core::stringAt(event.object, {"kind"}) != "PartialObjectMetadata") {
          failure = malformed(std::string("watch event ") + watchEventTypeName(event.type) +
                              " does not carry a PartialObjectMetadata");
          return false;
        }
        if (!handler(std::move(event))) {
          handlerStopped = true;
          return false;
        }
        return true;
      });
      if (!status) failure = std::move(status).error();
      return !failure && !handlerStopped;
    };
    auto response = transport_->stream(request, onChunk, stop);
    if (failure) return core::Result<WatchEnd>(std::move(*failure)).withContext(what);
    if (handlerStopped || stop.stop_requested()) return WatchEnd{true};
    if (!response) {
      core::Error error = std::move(response).error();
      if (auto cut = decoder.finish(); !cut) error.message += "; " + cut.error().message;
      return std::move(error).withContext(what);
    }
    if (response->status == 401 && attempt == 0 && auth_->invalidate(*credential)) continue;
    if (response->status < 200 || response->status > 299)
      return core::Result<WatchEnd>(errorFromResponse(response->status, response->headers, response->body))
          .withContext(what);
    if (auto cut = decoder.finish(); !cut)
      return core::Result<WatchEnd>(std::move(cut).error()).withContext(what);
    return WatchEnd{false};
  }
}

core::Result<json> Client::write(const std::string& method, std::string path, const json& body,
                                 const std::string& contentType, const std::string& query) {
  Request request;
  request.method = method;
  request.path = std::move(path) + query;
  request.headers.emplace_back("Accept", kAcceptJson);
  request.headers.emplace_back("Content-Type", contentType);
  try {
    request.body = body.dump();
  } catch (const json::exception& e) {
    // dump() throws on invalid UTF-8 in strings.
    return core::makeError(ErrorKind::InvalidInput, std::string("cannot encode the body: ") + e.what());
  }
  return executeJson(std::move(request));
}

core::Result<json> Client::create(const ResourceRef& ref, std::string_view namespace_, const json& object,
                                  const WriteOptions& options) {
  Query query;
  query.add("dryRun", options.dryRun ? "All" : "").add("fieldManager", options.fieldManager);
  return write("POST", resourcePath(ref, namespace_), object, "application/json", query.str());
}

core::Result<json> Client::replace(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                                   const json& object, const WriteOptions& options) {
  Query query;
  query.add("dryRun", options.dryRun ? "All" : "").add("fieldManager", options.fieldManager);
  return write("PUT", resourcePath(ref, namespace_, name), object, "application/json", query.str());
}

core::Result<json> Client::apply(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                                 const json& object, const ApplyOptions& options) {
  if (options.fieldManager.empty())
    return core::makeError(ErrorKind::InvalidInput, "server-side apply needs a field manager");
  Query query;
  query.add("fieldManager", options.fieldManager)
      .add("force", options.force ? "true" : "")
      .add("dryRun", options.dryRun ? "All" : "");
  return write("PATCH", resourcePath(ref, namespace_, name), object, "application/apply-patch+yaml",
               query.str());
}

core::Result<json> Client::jsonPatch(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                                     const json& patch, const WriteOptions& options) {
  if (!patch.is_array()) return core::makeError(ErrorKind::InvalidInput, "a JSON Patch is an array");
  Query query;
  query.add("dryRun", options.dryRun ? "All" : "").add("fieldManager", options.fieldManager);
  return write("PATCH", resourcePath(ref, namespace_, name), patch, "application/json-patch+json", query.str());
}

core::Result<json> Client::mergePatch(const ResourceRef& ref, std::string_view namespace_,
                                      std::string_view name, const json& patch, const WriteOptions& options) {
  if (!patch.is_object()) return core::makeError(ErrorKind::InvalidInput, "a merge patch is an object");
  Query query;
  query.add("dryRun", options.dryRun ? "All" : "").add("fieldManager", options.fieldManager);
  return write("PATCH", resourcePath(ref, namespace_, name), patch, "application/merge-patch+json",
               query.str());
}

core::Result<json> Client::createSubresource(const ResourceRef& ref, std::string_view namespace_,
                                             std::string_view name, std::string_view subresource,
                                             const json& body) {
  return write("POST", resourcePath(ref, namespace_, name, subresource), body, "application/json", "");
}

namespace {
json deleteOptionsJson(const DeleteOptions& options) {
  json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (options.uid) body["preconditions"]["uid"] = *options.uid;
  if (options.resourceVersion) body["preconditions"]["resourceVersion"] = *options.resourceVersion;
  if (!options.propagationPolicy.empty()) body["propagationPolicy"] = options.propagationPolicy;
  if (options.gracePeriodSeconds) body["gracePeriodSeconds"] = *options.gracePeriodSeconds;
  if (options.dryRun) body["dryRun"] = json::array({"All"});
  return body;
}
}  // namespace

core::Status Client::remove(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                            const DeleteOptions& options) {
  auto result =
      write("DELETE", resourcePath(ref, namespace_, name), deleteOptionsJson(options), "application/json", "");
  if (!result) return std::move(result).error();
  return core::okStatus();
}

core::Status Client::evict(std::string_view namespace_, std::string_view podName,
                           const DeleteOptions& options) {
  json eviction = {{"apiVersion", "policy/v1"},
                   {"kind", "Eviction"},
                   {"metadata", {{"name", podName}, {"namespace", namespace_}}},
                   {"deleteOptions", deleteOptionsJson(options)}};
  auto result = write("POST", resourcePath(resources::pods(), namespace_, podName, "eviction"), eviction,
                      "application/json", "");
  if (!result) return std::move(result).error();
  return core::okStatus();
}

core::Result<json> Client::createEvent(const EventRecord& event) {
  constexpr std::size_t kMaxNote = 1024;  // events.k8s.io/v1 validation limit for `note`
  // Cut at a character boundary: a cut inside a UTF-8 sequence would make the body unserialisable.
  std::string note = core::truncateUtf8(event.note, kMaxNote);
  // Named as client-go's recorder names them: "<regarding name>.<time in ns, hex>" (an explicit
  // name; recent apiservers reject a generateName ending in '.'). Cut to the 253-character limit.
  auto now = clock_.wallNow();
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%llx",
                static_cast<unsigned long long>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()));
  std::string eventName = event.regarding.name.substr(0, 253 - std::strlen(suffix)) + suffix;
  json regarding = {{"apiVersion", event.regarding.apiVersion},
                    {"kind", event.regarding.kind},
                    {"name", event.regarding.name}};
  if (!event.regarding.namespace_.empty()) regarding["namespace"] = event.regarding.namespace_;
  if (!event.regarding.uid.empty()) regarding["uid"] = event.regarding.uid;
  json body = {{"apiVersion", "events.k8s.io/v1"},
               {"kind", "Event"},
               {"metadata", {{"name", eventName}, {"namespace", event.namespace_}}},
               {"eventTime", base::formatRfc3339(std::chrono::floor<std::chrono::microseconds>(now),
                                                 base::Fraction::Micros)},
               {"regarding", regarding},
               {"type", event.type},
               {"reason", event.reason},
               {"action", event.action},
               {"note", note},
               {"reportingController", event.reportingController},
               {"reportingInstance", event.reportingInstance}};
  return create(resources::events(), event.namespace_, body);
}

json leaseToJson(const LeaseRecord& lease) {
  json spec = json::object();
  if (!lease.holderIdentity.empty()) spec["holderIdentity"] = lease.holderIdentity;
  if (lease.leaseDurationSeconds > 0) spec["leaseDurationSeconds"] = lease.leaseDurationSeconds;
  if (!lease.acquireTime.empty()) spec["acquireTime"] = lease.acquireTime;
  if (!lease.renewTime.empty()) spec["renewTime"] = lease.renewTime;
  spec["leaseTransitions"] = lease.leaseTransitions;
  json metadata = {{"name", lease.name}, {"namespace", lease.namespace_}};
  if (!lease.resourceVersion.empty()) metadata["resourceVersion"] = lease.resourceVersion;
  return {{"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"}, {"metadata", metadata}, {"spec", spec}};
}

core::Result<LeaseRecord> leaseFromJson(const json& object) {
  if (!object.is_object()) return malformed("a Lease is not an object");
  LeaseRecord lease;
  lease.name = core::metadataString(object, "name");
  lease.namespace_ = core::metadataString(object, "namespace");
  lease.resourceVersion = core::metadataString(object, "resourceVersion");
  auto spec = object.find("spec");
  if (spec == object.end() || spec->is_null()) return lease;
  if (!spec->is_object()) return malformed("Lease spec is not an object");
  lease.holderIdentity = core::stringAt(object, {"spec", "holderIdentity"});
  lease.acquireTime = core::stringAt(object, {"spec", "acquireTime"});
  lease.renewTime = core::stringAt(object, {"spec", "renewTime"});
  if (auto it = spec->find("leaseDurationSeconds"); it != spec->end() && it->is_number_integer())
    lease.leaseDurationSeconds = it->get<std::int64_t>();
  if (auto it = spec->find("leaseTransitions"); it != spec->end() && it->is_number_integer())
    lease.leaseTransitions = it->get<std::int64_t>();
  return lease;
}

core::Result<LeaseRecord> Client::getLease(std::string_view namespace_, std::string_view name) {
  auto object = get(resources::leases(), namespace_, name);
  if (!object) return std::move(object).error();
  return leaseFromJson(*object);
}

core::Result<LeaseRecord> Client::createLease(const LeaseRecord& lease) {
  auto object = create(resources::leases(), lease.namespace_, leaseToJson(lease));
  if (!object) return std::move(object).error();
  return leaseFromJson(*object);
}

core::Result<LeaseRecord> Client::updateLease(const LeaseRecord& lease) {
  if (lease.resourceVersion.empty())
    return core::makeError(ErrorKind::InvalidInput, "updating a Lease needs its resourceVersion");
  auto object = replace(resources::leases(), lease.namespace_, lease.name, leaseToJson(lease));
  if (!object) return std::move(object).error();
  return leaseFromJson(*object);
}

core::Result<std::string> Client::getRaw(std::string_view path) {
  Request request;
  request.path = std::string(path);
  auto response = execute(std::move(request));
  if (!response) return std::move(response).error();
  if (response->status < 200 || response->status > 299)
    return errorFromResponse(response->status, response->headers, response->body);
  return std::move(response->body);
}

}  // namespace restarter::kube
