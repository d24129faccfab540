#pragma once
// The benchmark programs' connection: the kubeconfig found as kubectl finds it (KUBECONFIG,
// ~/.kube/config), or exit 2 saying why.

#include <cstdlib>
#include <iostream>
#include <memory>

#include "restarter/kube/client.hpp"

namespace restarter::bench {

inline std::unique_ptr<kube::Client> connectOrExit() {
  auto client = kube::Client::connect(kube::LoadOptions{});
  if (!client) {
    std::cerr << "bench: " << client.error().describe() << "\n";
    std::exit(2);
  }
  return std::move(client).value();
}

}  // namespace restarter::bench
