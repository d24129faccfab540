#include "restarter/controller/queue_key.hpp"

#include <functional>
#include <unordered_set>

#include <catch2/catch.hpp>

#include "support.hpp"

using restarter::controller::ObjectName;
using restarter::controller::QueueKey;
using restarter::controller::testing::NamedReconciler;

namespace {
NamedReconciler rollKeyed("ondelete-statefulset");
NamedReconciler stsKeyed("statefulset");
NamedReconciler deployKeyed("deployment");
NamedReconciler podKeyed("pod-expiry");
NamedReconciler aKeyed("a");
}  // namespace

TEST_CASE("a queue key names its reconciler and object for messages", "[controller][queue]") {
  const QueueKey key{&rollKeyed, {"shop", "web"}};
  CHECK(key.object.key() == "shop/web");
  CHECK(key.toString() == "ondelete-statefulset/shop/web");
  CHECK(ObjectName{"", "node-a"}.key() == "node-a");  // as cache::objectKey names it
}

TEST_CASE("queue keys are equal only when reconciler and namespace and name are", "[controller][queue]") {
  const QueueKey key{&stsKeyed, {"ns", "web"}};
  CHECK(key == QueueKey{&stsKeyed, {"ns", "web"}});
  CHECK_FALSE(key == QueueKey{&deployKeyed, {"ns", "web"}});
  CHECK_FALSE(key == QueueKey{&stsKeyed, {"other", "web"}});
  CHECK_FALSE(key == QueueKey{&stsKeyed, {"ns", "api"}});
  // Fields are not joined: keys whose joined text is the same stay apart.
  CHECK_FALSE(QueueKey{&aKeyed, {"b/c", "d"}} == QueueKey{&aKeyed, {"b", "c/d"}});
}

TEST_CASE("equal queue keys hash alike and distinct ones are kept apart in a set", "[controller][queue]") {
  const std::hash<QueueKey> hash;
  CHECK(hash(QueueKey{&podKeyed, {"ns", "p"}}) == hash(QueueKey{&podKeyed, {"ns", "p"}}));
  std::unordered_set<QueueKey> keys{QueueKey{&podKeyed, {"ns", "p"}},  QueueKey{&podKeyed, {"ns", "p"}},
                                    QueueKey{&stsKeyed, {"ns", "p"}},  QueueKey{&podKeyed, {"p", "ns"}},
                                    QueueKey{&podKeyed, {"ns/p", ""}}, QueueKey{&podKeyed, {"", "ns/p"}}};
  CHECK(keys.size() == 5);
}
