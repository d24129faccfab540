// Fuzz target: watch stream decoding (lib/kube/watch.hpp), alone and through Client::watch.
// The first input byte picks how the rest is cut into chunks (as the network would cut it);
// the rest is the stream. Checks beyond "no crash": the events, the error and the end-of-stream
// verdict do not depend on how the stream was cut (whole vs. chunked); Client::watch answers
// with a value or an error.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "fakes.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/watch.hpp"
#include "restarter/testing/fake_clock.hpp"

namespace {

using namespace restarter::kube;

struct Decoded {
  std::vector<std::string> events;  // "TYPE object"
  bool failed = false;
  bool finishedCleanly = false;
};

Decoded decode(std::string_view stream, std::size_t chunkSize) {
  Decoded out;
  WatchDecoder decoder;
  for (std::size_t at = 0; at < stream.size() && !out.failed; at += chunkSize) {
    out.failed = !decoder
                      .feed(stream.substr(at, chunkSize),
                            [&](WatchEvent&& event) {
                              out.events.push_back(std::string(watchEventTypeName(event.type)) + " " +
                                                   event.object.dump());
                              return true;
                            })
                      .ok();
  }
  out.finishedCleanly = decoder.finish().ok();
  return out;
}

[[noreturn]] void fail(const char* what) { restarter::fuzz::fail("watch_stream_fuzz", what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunkSize = 1 + data[0] % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  const Decoded whole = decode(stream, stream.size() + 1);
  const Decoded chunked = decode(stream, chunkSize);
  if (whole.events != chunked.events) fail("events depend on chunking");
  if (whole.failed != chunked.failed) fail("the error depends on chunking");
  if (!whole.failed && whole.finishedCleanly != chunked.finishedCleanly) fail("the end depends on chunking");

  // The client's handling of the same stream: ERROR events (410 -> Gone), a cut event.
  restarter::testing::FakeClock clock;
  testing::FakeProcessRunner runner;
  auto transport = std::make_unique<testing::FakeTransport>();
  std::vector<std::string> chunks;
  for (std::size_t at = 0; at < stream.size(); at += chunkSize)
    chunks.emplace_back(stream.substr(at, chunkSize));
  transport->push(testing::stream(std::move(chunks)));
  Client client(std::move(transport), makeAuthenticator(ConnectionConfig{}, clock, runner), "n", clock);
  WatchOptions options;
  options.metadataOnly = true;
  std::size_t seen = 0;
  const auto end = client.watch(resources::configMaps(), "n", options, [&](WatchEvent&&) {
    ++seen;
    return true;
  });
  if (!end && end.error().message.empty()) fail("an error without a message");
  if (seen > whole.events.size()) fail("the client saw more events than the decoder");
  return 0;
}
