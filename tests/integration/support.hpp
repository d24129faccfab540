#pragma once
// Shared by the integration tests (tests/integration): a Client from the cluster's KUBECONFIG, a
// throw-away namespace per test, bounded waits, and restarting kube-apiserver of the local control
// plane. Everything here runs inside the cluster's network namespace (cluster.sh exec).

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "restarter/kube/client.hpp"

namespace restarter::integration {

// The admin connection from KUBECONFIG (the cluster's admin kubeconfig under cluster.sh exec).
kube::ConnectionConfig adminConfig();
std::unique_ptr<kube::Client> adminClient();

// A namespace with a unique name, deleted (in the background) when the object goes.
class TestNamespace {
 public:
  TestNamespace(kube::Client& client, const std::string& prefix);
  TestNamespace(const TestNamespace&) = delete;
  TestNamespace& operator=(const TestNamespace&) = delete;
  ~TestNamespace();
  const std::string& name() const { return name_; }

 private:
  kube::Client& client_;
  std::string name_;
};

// Polls `condition` every `interval` until it holds or `timeout` passes. True if it held.
bool waitUntil(std::chrono::milliseconds timeout, const std::function<bool()>& condition,
               std::chrono::milliseconds interval = std::chrono::milliseconds(100));

// Stops kube-apiserver (found by its PID file in $RESTARTER_CLUSTER_STATE_DIR/run, checked
// against its start time), starts it again with the same command line, environment and working
// directory, detached and logging where it did, updates the PID file so `cluster.sh down` stops
// the new process, and waits until /readyz answers. Empty string on success, else what failed.
std::string restartApiserver(kube::Client& client, std::chrono::seconds readyTimeout);

void writeFile(const std::string& path, const std::string& contents);

}  // namespace restarter::integration
