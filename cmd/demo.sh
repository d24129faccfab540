#!/usr/bin/env bash
# The main job, in one command (README "Set up"). Today it:
#   1. installs the Debian packages restarter needs (tests/install-deps.sh);
#   2. builds `restarter` (build/demo) and prints its help;
#   3. builds the local control plane if not cached and brings it up (tests/cluster), leaving it
#      running, and prints how to use kubectl against it and how to stop it.
# The controller, the webhook and the sample workload join this script as those subcommands land
# (issues 5 to 8 of the tracker).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

tests/install-deps.sh
cmake -S . -B build/demo -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESTARTER_BUILD_TESTS=OFF >/dev/null
cmake --build build/demo -j "$(nproc 2>/dev/null || echo 2)"
echo
build/demo/cmd/restarter/restarter --help
echo

export RESTARTER_CLUSTER=${RESTARTER_CLUSTER:-demo}
tests/cluster/cluster.sh up
cat <<TXT

The local control plane "${RESTARTER_CLUSTER}" is running in its own network namespace.
Explore it (every client must run inside the namespace):
  RESTARTER_CLUSTER=${RESTARTER_CLUSTER} tests/cluster/cluster.sh exec -- kubectl get nodes,pods -A
Stop it:
  RESTARTER_CLUSTER=${RESTARTER_CLUSTER} tests/cluster/cluster.sh down
TXT
