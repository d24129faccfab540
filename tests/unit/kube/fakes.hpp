#pragma once
// One fake per seam of restarter::kube: a transport replaying scripted answers and a process runner
// returning scripted outputs. Shared by tests/unit/kube and cache; the clock and randomness fakes
// are tests/support's (restarter::testing).

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "restarter/kube/process.hpp"
#include "restarter/kube/transport.hpp"

namespace restarter::kube::testing {

// One scripted answer: a transport error, or a status/headers/body. For stream(), a 2xx body is
// delivered as `chunks` (the body is ignored), and `streamError` (if set) follows the chunks, as
// when a connection is cut.
struct Scripted {
  std::optional<core::Error> error;
  long status = 200;
  HeaderMap headers;
  std::string body;
  std::vector<std::string> chunks;
  std::optional<core::Error> streamError;
  // Called when the request is served (e.g. to assert on it or to change shared state).
  std::function<void(const Request&)> onServe;
};

inline Scripted ok(std::string body) {
  Scripted s;
  s.body = std::move(body);
  return s;
}
inline Scripted status(long code, std::string body, HeaderMap headers = {}) {
  Scripted s;
  s.status = code;
  s.body = std::move(body);
  s.headers = std::move(headers);
  return s;
}
inline Scripted stream(std::vector<std::string> chunks) {
  Scripted s;
  s.chunks = std::move(chunks);
  return s;
}
inline Scripted failure(core::ErrorKind kind, std::string message) {
  Scripted s;
  s.error = core::makeError(kind, std::move(message));
  return s;
}

class FakeTransport final : public Transport {
 public:
  // Answers are consumed in order; when none is left, the answer is Unavailable "script ended".
  void push(Scripted answer) {
    std::lock_guard lock(mutex_);
    script_.push_back(std::move(answer));
  }
  std::vector<Request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::size_t remaining() const {
    std::lock_guard lock(mutex_);
    return script_.size();
  }

  core::Result<Response> send(const Request& request) override {
    Scripted answer = next(request);
    if (answer.error) return *answer.error;
    return Response{answer.status, answer.headers, answer.body};
  }

  core::Result<Response> stream(const Request& request, const ChunkHandler& onChunk,
                                std::stop_token stop) override {
    Scripted answer = next(request);
    if (answer.error) return *answer.error;
    if (answer.status < 200 || answer.status > 299) return Response{answer.status, answer.headers, answer.body};
    for (const auto& chunk : answer.chunks) {
      if (stop.stop_requested()) return Response{answer.status, answer.headers, {}};
      if (!onChunk(chunk)) return Response{answer.status, answer.headers, {}};
    }
    if (answer.streamError) return *answer.streamError;
    return Response{answer.status, answer.headers, {}};
  }

 private:
  Scripted next(const Request& request) {
    Scripted answer;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
      if (script_.empty()) {
        answer = failure(core::ErrorKind::Unavailable, "script ended");
      } else {
        answer = std::move(script_.front());
        script_.pop_front();
      }
    }
    if (answer.onServe) answer.onServe(request);
    return answer;
  }

  mutable std::mutex mutex_;
  std::deque<Scripted> script_;
  std::vector<Request> requests_;
};

class FakeProcessRunner final : public ProcessRunner {
 public:
  std::deque<core::Result<ProcessOutput>> outputs;
  std::vector<ProcessSpec> calls;

  core::Result<ProcessOutput> run(const ProcessSpec& spec) override {
    calls.push_back(spec);
    if (outputs.empty()) return core::makeError(core::ErrorKind::NotFound, "no scripted output");
    auto out = std::move(outputs.front());
    outputs.pop_front();
    return out;
  }
};

}  // namespace restarter::kube::testing
