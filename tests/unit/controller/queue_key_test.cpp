#include "restarter/controller/queue_key.hpp"

#include <functional>
#include <unordered_set>

#include <catch2/catch.hpp>

using restarter::controller::ObjectName;
using restarter::controller::QueueKey;

TEST_CASE("a queue key names its reconciler and object for messages", "[controller][queue]") {
  const QueueKey key{"ondelete-statefulset", {"shop", "web"}};
  CHECK(key.object.key() == "shop/web");
  CHECK(key.toString() == "ondelete-statefulset/shop/web");
  CHECK(ObjectName{"", "node-a"}.key() == "node-a");  // as cache::objectKey names it
}

TEST_CASE("queue keys are equal only when kind and namespace and name are", "[controller][queue]") {
  const QueueKey key{"statefulset", {"ns", "web"}};
  CHECK(key == QueueKey{"statefulset", {"ns", "web"}});
  CHECK_FALSE(key == QueueKey{"deployment", {"ns", "web"}});
  CHECK_FALSE(key == QueueKey{"statefulset", {"other", "web"}});
  CHECK_FALSE(key == QueueKey{"statefulset", {"ns", "api"}});
  // Fields are not joined: keys whose joined text is the same stay apart.
  CHECK_FALSE(QueueKey{"a", {"b/c", "d"}} == QueueKey{"a", {"b", "c/d"}});
}

TEST_CASE("equal queue keys hash alike and distinct ones are kept apart in a set", "[controller][queue]") {
  const std::hash<QueueKey> hash;
  CHECK(hash(QueueKey{"pod", {"ns", "p"}}) == hash(QueueKey{"pod", {"ns", "p"}}));
  std::unordered_set<QueueKey> keys{QueueKey{"pod", {"ns", "p"}},         QueueKey{"pod", {"ns", "p"}},
                                    QueueKey{"statefulset", {"ns", "p"}}, QueueKey{"pod", {"p", "ns"}},
                                    QueueKey{"pod", {"ns/p", ""}},        QueueKey{"pod", {"", "ns/p"}}};
  CHECK(keys.size() == 5);
}
