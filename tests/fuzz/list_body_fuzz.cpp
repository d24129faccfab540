// Fuzz target: decoding the apiserver's answers (lib/kube/client.hpp and errors.hpp): a
// (PartialObjectMetadata)List page, a single object, a Lease, and a metav1.Status error body with
// its Retry-After. The input is the body; every call must answer with a value or an error with a
// message. A list answer must not hold items that are not JSON objects.

#include <cstddef>
#include <cstdint>
#include <string>

#include "check.hpp"
#include "fakes.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/errors.hpp"
#include "restarter/testing/fake_clock.hpp"

namespace {

using namespace restarter::kube;

constexpr const char* kTarget = "list_body_fuzz";

[[noreturn]] void fail(const char* what) { restarter::fuzz::fail(kTarget, what); }

template <typename T>
void expectMessage(const restarter::core::Result<T>& result) {
  restarter::fuzz::expectMessage(kTarget, result);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  restarter::testing::FakeClock clock;
  testing::FakeProcessRunner runner;
  auto owned = std::make_unique<testing::FakeTransport>();
  testing::FakeTransport& transport = *owned;
  Client client(std::move(owned), makeAuthenticator(ConnectionConfig{}, clock, runner), "n", clock);

  transport.push(testing::ok(body));  // a second page, if the body asks for one, is "script ended"
  ListOptions metadata;
  metadata.metadataOnly = true;
  const auto list = client.list(resources::secrets(), "n", metadata);
  expectMessage(list);
  if (list) {
    for (const auto& item : list->items) {
      if (!item.is_object()) fail("a list item that is not an object");
    }
  }

  transport.push(testing::ok(body));
  expectMessage(client.listPage(resources::configMaps(), "", ListOptions{}));

  transport.push(testing::ok(body));
  expectMessage(client.get(resources::configMaps(), "n", "a", GetOptions{/*metadataOnly=*/true}));

  transport.push(testing::ok(body));
  expectMessage(client.getLease("n", "l"));

  transport.push(testing::status(409, body, {{"retry-after", body.substr(0, 16)}}));
  const auto refused = client.get(resources::configMaps(), "n", "a");
  if (refused) fail("a 409 answer gave a value");
  if (refused.error().message.empty()) fail("an error without a message");
  (void)retryAfter(refused.error());
  (void)errorFromStatusObject(body);
  return 0;
}
