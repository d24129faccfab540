#include "restarter/testing/fake_api_server.hpp"

#include "restarter/kube/auth.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace restarter::testing {

using nlohmann::json;

namespace {

std::string urlDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

kube::Response answer(long code, const json& body) { return kube::Response{code, {}, body.dump()}; }

kube::Response failure(long code, const std::string& reason, const std::string& message) {
  return answer(code, json{{"kind", "Status"},
                           {"apiVersion", "v1"},
                           {"status", "Failure"},
                           {"reason", reason},
                           {"message", message},
                           {"code", code}});
}

std::string header(const kube::Request& request, std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (key.size() == name.size() && std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        }))
      return value;
  }
  return {};
}

std::string metadataString(const json& object, const char* field) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  const auto value = metadata->find(field);
  return value != metadata->end() && value->is_string() ? value->get<std::string>() : std::string();
}

json partialMetadata(const json& object) {
  return json{{"apiVersion", "meta.k8s.io/v1"},
              {"kind", "PartialObjectMetadata"},
              {"metadata", object.value("metadata", json::object())}};
}

// One term of a label selector: `k=v`, `k==v`, `k!=v`, `k`, `!k`.
bool termMatches(const json& labels, const std::string& term) {
  auto has = [&](const std::string& key) { return labels.is_object() && labels.contains(key); };
  auto value = [&](const std::string& key) {
    return has(key) && labels[key].is_string() ? labels[key].get<std::string>() : std::string();
  };
  if (auto at = term.find("!="); at != std::string::npos) {
    const std::string key = term.substr(0, at);
    return !has(key) || value(key) != term.substr(at + 2);
  }
  if (auto at = term.find("=="); at != std::string::npos) {
    const std::string key = term.substr(0, at);
    return has(key) && value(key) == term.substr(at + 2);
  }
  if (auto at = term.find('='); at != std::string::npos) {
    const std::string key = term.substr(0, at);
    return has(key) && value(key) == term.substr(at + 1);
  }
  if (!term.empty() && term[0] == '!') return !has(term.substr(1));
  return has(term);
}

bool selected(const json& object, const std::string& selector) {
  if (selector.empty()) return true;
  const json labels = object.value("metadata", json::object()).value("labels", json::object());
  for (const auto& term : split(selector, ','))
    if (!termMatches(labels, term)) return false;
  return true;
}

// The group version whose discovery document `path` asks for ("/api/v1": "v1",
// "/apis/argoproj.io/v1alpha1": "argoproj.io/v1alpha1"), or std::nullopt.
std::optional<std::string> discoveredGroupVersion(std::string_view path) {
  const std::vector<std::string> segments = split(path.substr(1, path.find('?') - 1), '/');
  if (segments.size() == 2 && segments[0] == "api" && !segments[1].empty()) return segments[1];
  if (segments.size() == 3 && segments[0] == "apis" && !segments[1].empty() && !segments[2].empty())
    return segments[1] + "/" + segments[2];
  return std::nullopt;
}

}  // namespace

// Where a request goes: the collection ("group/resource"), its kind's apiVersion, a namespace,
// a name and a subresource (each possibly empty), and the query's parameters.
struct FakeApiServer::Target {
  std::string collection;
  std::string apiVersion;
  std::string namespace_;
  std::string name;
  std::string subresource;
  std::map<std::string, std::string> query;

  std::string key() const { return namespace_ + "/" + name; }
  std::string param(const std::string& name_) const {
    auto it = query.find(name_);
    return it == query.end() ? std::string() : it->second;
  }

  // nullopt for a path that is not a resource's.
  static std::optional<Target> parse(const std::string& path) {
    Target target;
    const std::size_t mark = path.find('?');
    if (mark != std::string::npos) {
      for (const auto& pair : split(std::string_view(path).substr(mark + 1), '&')) {
        const std::size_t eq = pair.find('=');
        target.query[urlDecode(pair.substr(0, eq))] =
            eq == std::string::npos ? "" : urlDecode(pair.substr(eq + 1));
      }
    }
    std::vector<std::string> segments =
        split(std::string_view(path).substr(1, mark == std::string::npos ? std::string::npos : mark - 1), '/');
    std::string group;
    std::size_t at = 0;
    if (segments.size() >= 2 && segments[0] == "api") {
      target.apiVersion = segments[1];
      at = 2;
    } else if (segments.size() >= 3 && segments[0] == "apis") {
      group = segments[1];
      target.apiVersion = segments[1] + "/" + segments[2];
      at = 3;
    } else {
      return std::nullopt;
    }
    std::vector<std::string> rest(segments.begin() + static_cast<std::ptrdiff_t>(at), segments.end());
    for (auto& segment : rest) segment = urlDecode(segment);
    if (rest.size() >= 3 && rest[0] == "namespaces") {
      target.namespace_ = rest[1];
      rest.erase(rest.begin(), rest.begin() + 2);
    }
    if (rest.empty() || rest.size() > 3) return std::nullopt;
    target.collection = group + "/" + rest[0];
    if (rest.size() >= 2) target.name = rest[1];
    if (rest.size() == 3) target.subresource = rest[2];
    return target;
  }
};

FakeApiServer::FakeApiServer() = default;
FakeApiServer::~FakeApiServer() { endWatches(); }

FakeApiServer::Target FakeApiServer::targetOf(const kube::ResourceRef& ref, std::string_view namespace_,
                                              std::string_view name) {
  Target target;
  target.collection = ref.group + "/" + ref.plural;
  target.apiVersion = ref.apiVersion();
  target.namespace_ = ref.namespaced ? std::string(namespace_) : std::string();
  target.name = std::string(name);
  return target;
}

json FakeApiServer::seed(const kube::ResourceRef& ref, json object) {
  const Target target = targetOf(ref, metadataString(object, "namespace"), metadataString(object, "name"));
  if (!object.contains("apiVersion")) object["apiVersion"] = ref.apiVersion();
  if (!object.contains("kind")) object["kind"] = ref.kind;
  const std::string uid = metadataString(object, "uid");
  std::lock_guard lock(mutex_);
  store(target, std::move(object), true, false);
  json& stored = *find(target);
  if (!uid.empty()) {  // as seeded: tests name uids their caches also hold
    stored["metadata"]["uid"] = uid;
    changes_.back().object["metadata"]["uid"] = uid;
  }
  return stored;
}

json FakeApiServer::put(const kube::ResourceRef& ref, json object) {
  const Target target = targetOf(ref, metadataString(object, "namespace"), metadataString(object, "name"));
  {
    std::lock_guard lock(mutex_);
    if (const json* current = find(target); current != nullptr) {
      object["metadata"]["uid"] = metadataString(*current, "uid");
      store(target, std::move(object), false, false);
      return *find(target);
    }
  }
  return seed(ref, std::move(object));
}

bool FakeApiServer::erase(const kube::ResourceRef& ref, std::string_view namespace_, std::string_view name) {
  std::lock_guard lock(mutex_);
  return remove(targetOf(ref, namespace_, name), json::object(), false).status == 200;
}

std::optional<json> FakeApiServer::object(const kube::ResourceRef& ref, std::string_view namespace_,
                                          std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto collection = objects_.find(ref.group + "/" + ref.plural);
  if (collection == objects_.end()) return std::nullopt;
  auto it = collection->second.find(std::string(ref.namespaced ? namespace_ : "") + "/" + std::string(name));
  if (it == collection->second.end()) return std::nullopt;
  return it->second;
}

std::vector<json> FakeApiServer::objects(const kube::ResourceRef& ref, std::string_view namespace_) const {
  std::lock_guard lock(mutex_);
  std::vector<json> out;
  auto collection = objects_.find(ref.group + "/" + ref.plural);
  if (collection == objects_.end()) return out;
  for (const auto& [key, object] : collection->second)
    if (namespace_.empty() || metadataString(object, "namespace") == namespace_) out.push_back(object);
  return out;
}

std::vector<json> FakeApiServer::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

std::vector<kube::Request> FakeApiServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

std::size_t FakeApiServer::writes() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(requests_.begin(), requests_.end(), [](const kube::Request& r) {
    return r.method == "POST" || r.method == "PUT" || r.method == "PATCH" || r.method == "DELETE";
  }));
}

std::size_t FakeApiServer::applies() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(requests_.begin(), requests_.end(), [](const kube::Request& r) {
    return r.method == "PATCH" && header(r, "Content-Type") == "application/apply-patch+yaml";
  }));
}

void FakeApiServer::install(const kube::ResourceRef& ref) {
  std::lock_guard lock(mutex_);
  auto& resources = installed_[ref.apiVersion()];
  if (std::none_of(resources.begin(), resources.end(),
                   [&](const kube::ResourceRef& installed) { return installed.plural == ref.plural; }))
    resources.push_back(ref);
}

void FakeApiServer::compact() {
  std::lock_guard lock(mutex_);
  compactedBelow_ = resourceVersion_ + 1;
  changes_.clear();
}

void FakeApiServer::endWatches() {
  {
    std::lock_guard lock(mutex_);
    ++watchGeneration_;
  }
  changed_.notify_all();
}

void FakeApiServer::setInterceptor(Interceptor interceptor) {
  std::lock_guard lock(mutex_);
  interceptor_ = std::move(interceptor);
}

std::optional<kube::Response> FakeApiServer::receive(const kube::Request& request) {
  Interceptor interceptor;
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
    interceptor = interceptor_;
  }
  if (interceptor) return interceptor(request);
  return std::nullopt;
}

core::Result<kube::Response> FakeApiServer::send(const kube::Request& request) {
  if (auto response = receive(request)) return *response;
  auto target = Target::parse(request.path);
  if (!target) {
    if (const auto groupVersion = discoveredGroupVersion(request.path);
        groupVersion && request.method == "GET") {
      std::lock_guard lock(mutex_);
      return discovery(*groupVersion);
    }
    return failure(404, "NotFound", "the server could not find the requested resource");
  }
  std::lock_guard lock(mutex_);
  return serve(request, *target);
}

core::Result<kube::Response> FakeApiServer::stream(const kube::Request& request,
                                                   const kube::ChunkHandler& onChunk, std::stop_token stop) {
  auto target = Target::parse(request.path);
  if (!target || target->param("watch").empty()) return send(request);
  if (auto response = receive(request)) return *response;
  const bool metadataOnly = header(request, "Accept").find("PartialObjectMetadata") != std::string::npos;
  const std::string selector = target->param("labelSelector");
  const std::string rv = target->param("resourceVersion");
  std::unique_lock lock(mutex_);
  const std::uint64_t from = rv.empty() || rv == "0" ? resourceVersion_ : std::stoull(rv);
  const std::uint64_t generation = watchGeneration_;
  if (target->param("sendInitialEvents") == "true") {
    // A streaming list: every object as it is now as ADDED, then the bookmark that ends them.
    const json listed = json::parse(list(*target, selector, metadataOnly).body);
    std::string events;
    for (const json& item : listed["items"]) events += json{{"type", "ADDED"}, {"object", item}}.dump() + "\n";
    events += json{{"type", "BOOKMARK"},
                   {"object",
                    {{"kind", metadataOnly ? "PartialObjectMetadata" : "Bookmark"},
                     {"apiVersion", metadataOnly ? "meta.k8s.io/v1" : target->apiVersion},
                     {"metadata",
                      {{"resourceVersion", std::to_string(from)},
                       {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}}}}
                  .dump() +
              "\n";
    lock.unlock();
    if (!onChunk(events)) return kube::Response{200, {}, {}};
    lock.lock();
  }
  if (from != 0 && from + 1 < compactedBelow_) {
    const json gone = {{"type", "ERROR"},
                       {"object", json::parse(failure(410, "Expired", "too old resource version").body)}};
    lock.unlock();
    onChunk(gone.dump() + "\n");
    return kube::Response{200, {}, {}};
  }
  std::size_t next = 0;
  while (!stop.stop_requested() && watchGeneration_ == generation) {
    std::vector<json> batch;
    for (; next < changes_.size(); ++next) {
      const Change& change = changes_[next];
      if (change.resourceVersion <= from || change.collection != target->collection) continue;
      if (!target->namespace_.empty() && change.namespace_ != target->namespace_) continue;
      if (!selected(change.object, selector)) continue;
      batch.push_back(json{{"type", change.type},
                           {"object", metadataOnly ? partialMetadata(change.object) : change.object}});
    }
    if (!batch.empty()) {
      lock.unlock();
      for (const auto& event : batch)
        if (!onChunk(event.dump() + "\n")) return kube::Response{200, {}, {}};
      lock.lock();
      continue;
    }
    changed_.wait(lock, stop, [&] { return next < changes_.size() || watchGeneration_ != generation; });
  }
  return kube::Response{200, {}, {}};
}

json* FakeApiServer::find(const Target& target) {
  auto collection = objects_.find(target.collection);
  if (collection == objects_.end()) return nullptr;
  auto it = collection->second.find(target.key());
  return it == collection->second.end() ? nullptr : &it->second;
}

const json* FakeApiServer::find(const Target& target) const {
  return const_cast<FakeApiServer*>(this)->find(target);
}

kube::Response FakeApiServer::serve(const kube::Request& request, const Target& target) {
  const bool metadataOnly = header(request, "Accept").find("PartialObjectMetadata") != std::string::npos;
  const bool dryRun = target.param("dryRun") == "All";
  json body;
  if (!request.body.empty()) {
    body = json::parse(request.body, nullptr, false);
    if (body.is_discarded()) return failure(400, "BadRequest", "the request body is not JSON");
  }
  if (request.method == "GET") {
    return target.name.empty() ? list(target, target.param("labelSelector"), metadataOnly)
                               : get(target, metadataOnly);
  }
  if (target.collection == "/pods" && target.subresource == "eviction" && request.method == "POST") {
    return remove(target, body.value("deleteOptions", json::object()), dryRun);
  }
  if (request.method == "POST") return create(target, std::move(body), dryRun);
  if (request.method == "PUT") return replace(target, std::move(body), dryRun);
  if (request.method == "PATCH") return patch(target, request, dryRun);
  if (request.method == "DELETE") return remove(target, body, dryRun);
  return failure(405, "MethodNotAllowed", "method " + request.method + " is not served");
}

kube::Response FakeApiServer::discovery(const std::string& groupVersion) const {
  const auto installed = installed_.find(groupVersion);
  if (installed == installed_.end())
    return failure(404, "NotFound", "the server could not find the requested resource");
  json resources = json::array();
  for (const kube::ResourceRef& ref : installed->second) {
    resources.push_back(
        {{"name", ref.plural},
         {"namespaced", ref.namespaced},
         {"kind", ref.kind},
         {"verbs", {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}}});
  }
  return answer(200, json{{"kind", "APIResourceList"},
                          {"apiVersion", "v1"},
                          {"groupVersion", groupVersion},
                          {"resources", std::move(resources)}});
}

kube::Response FakeApiServer::get(const Target& target, bool metadataOnly) const {
  const json* object = find(target);
  if (object == nullptr)
    return failure(404, "NotFound", target.collection + " \"" + target.name + "\" not found");
  return answer(200, metadataOnly ? partialMetadata(*object) : *object);
}

kube::Response FakeApiServer::list(const Target& target, const std::string& labelSelector,
                                   bool metadataOnly) const {
  json items = json::array();
  if (auto collection = objects_.find(target.collection); collection != objects_.end()) {
    for (const auto& [key, object] : collection->second) {
      if (!target.namespace_.empty() && metadataString(object, "namespace") != target.namespace_) continue;
      if (!selected(object, labelSelector)) continue;
      items.push_back(metadataOnly ? partialMetadata(object) : object);
    }
  }
  return answer(200, json{{"apiVersion", metadataOnly ? "meta.k8s.io/v1" : target.apiVersion},
                          {"kind", metadataOnly ? "PartialObjectMetadataList" : "List"},
                          {"metadata", {{"resourceVersion", std::to_string(resourceVersion_)}}},
                          {"items", std::move(items)}});
}

kube::Response FakeApiServer::create(const Target& target, json object, bool dryRun) {
  if (!object.is_object()) return failure(400, "BadRequest", "the object is not a JSON object");
  Target named = target;
  named.name = metadataString(object, "name");
  if (named.name.empty()) {
    const std::string prefix = metadataString(object, "generateName");
    if (prefix.empty()) return failure(422, "Invalid", "metadata.name: Required value");
    named.name = prefix + std::to_string(++uids_);
    object["metadata"]["name"] = named.name;
  }
  if (find(named) != nullptr)
    return failure(409, "AlreadyExists", target.collection + " \"" + named.name + "\" already exists");
  return store(named, std::move(object), true, dryRun);
}

kube::Response FakeApiServer::replace(const Target& target, json object, bool dryRun) {
  const json* current = find(target);
  if (current == nullptr)
    return failure(404, "NotFound", target.collection + " \"" + target.name + "\" not found");
  const std::string expected = metadataString(object, "resourceVersion");
  if (!expected.empty() && expected != metadataString(*current, "resourceVersion"))
    return failure(409, "Conflict",
                   "the object has been modified; please apply your changes to the latest version");
  return store(target, std::move(object), false, dryRun);
}

kube::Response FakeApiServer::patch(const Target& target, const kube::Request& request, bool dryRun) {
  const std::string type = header(request, "Content-Type");
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return failure(400, "BadRequest", "the patch is not JSON");
  const json* current = find(target);
  if (current == nullptr) {
    if (type != "application/apply-patch+yaml")
      return failure(404, "NotFound", target.collection + " \"" + target.name + "\" not found");
    return store(target, std::move(body), true, dryRun);
  }
  json patched = *current;
  if (type == "application/json-patch+json") {
    try {
      patched = current->patch(body);
    } catch (const json::exception& error) {
      const bool failedTest = std::string(error.what()).find("unsuccessful") != std::string::npos;
      return failure(failedTest ? 409 : 422, failedTest ? "Conflict" : "Invalid", error.what());
    }
  } else if (type == "application/merge-patch+json" || type == "application/apply-patch+yaml") {
    patched.merge_patch(body);
  } else {
    return failure(415, "UnsupportedMediaType", "patch type " + type + " is not served");
  }
  return store(target, std::move(patched), false, dryRun);
}

kube::Response FakeApiServer::remove(const Target& target, const json& options, bool dryRun) {
  const json* current = find(target);
  if (current == nullptr)
    return failure(404, "NotFound", target.collection + " \"" + target.name + "\" not found");
  const json preconditions =
      options.is_object() ? options.value("preconditions", json::object()) : json::object();
  if ((preconditions.contains("uid") && preconditions["uid"] != metadataString(*current, "uid")) ||
      (preconditions.contains("resourceVersion") &&
       preconditions["resourceVersion"] != metadataString(*current, "resourceVersion")))
    return failure(409, "Conflict", "Precondition failed");
  const json removed = *current;
  if (dryRun) return answer(200, removed);
  objects_[target.collection].erase(target.key());
  changes_.push_back(Change{target.collection, target.namespace_, "DELETED", removed, ++resourceVersion_});
  changed_.notify_all();
  return answer(200, removed);
}

kube::Response FakeApiServer::store(const Target& target, json object, bool created, bool dryRun) {
  if (!created) {
    const std::string uid = metadataString(object, "uid");
    if (!uid.empty() && uid != metadataString(*find(target), "uid"))
      return failure(409, "Conflict", "Precondition failed: UID in precondition: " + uid);
  }
  json& metadata = object["metadata"];
  metadata["name"] = target.name;
  if (!target.namespace_.empty()) metadata["namespace"] = target.namespace_;
  const json* current = created ? nullptr : find(target);
  if (created) {
    metadata["uid"] = "uid-" + std::to_string(++uids_);
    metadata["generation"] = 1;
    metadata["creationTimestamp"] = "2027-01-15T08:00:00Z";
  } else {
    for (const char* kept : {"uid", "creationTimestamp"})
      if (current->contains("metadata") && (*current)["metadata"].contains(kept))
        metadata[kept] = (*current)["metadata"][kept];
    const std::int64_t generation =
        current->value("metadata", json::object()).value("generation", std::int64_t{1});
    const bool specChanged = object.value("spec", json()) != current->value("spec", json());
    metadata["generation"] = generation + (specChanged && target.subresource != "status" ? 1 : 0);
  }
  if (dryRun) {
    metadata["resourceVersion"] = std::to_string(resourceVersion_ + 1);
    return answer(created ? 201 : 200, object);
  }
  metadata["resourceVersion"] = std::to_string(++resourceVersion_);
  objects_[target.collection][target.key()] = object;
  if (target.collection == "events.k8s.io/events") events_.push_back(object);
  changes_.push_back(
      Change{target.collection, target.namespace_, created ? "ADDED" : "MODIFIED", object, resourceVersion_});
  changed_.notify_all();
  return answer(created ? 201 : 200, object);
}

namespace {
class NoCredentials final : public kube::Authenticator {
 public:
  core::Result<kube::Credential> credential() override { return kube::Credential{}; }
  bool invalidate(const kube::Credential&) override { return false; }
};
}  // namespace

FakeApi connectFakeApi(base::Clock& clock, std::string defaultNamespace) {
  auto server = std::make_unique<FakeApiServer>();
  FakeApi api;
  api.server = server.get();
  api.client = std::make_unique<kube::Client>(std::move(server), std::make_unique<NoCredentials>(),
                                              std::move(defaultNamespace), clock);
  return api;
}

}  // namespace restarter::testing
