#!/bin/sh
# Runs the restarter binary under test from kuttl step scripts (which run in the test's
# directory, kuttl/tests/<test>). RESTARTER_BIN overrides the binary; the default is what
# tests/run.sh builds: build/ci/cmd/restarter/restarter at the repository root.
here=$(cd "$(dirname "$0")" && pwd)
bin=${RESTARTER_BIN:-$here/../../build/ci/cmd/restarter/restarter}
if [ ! -x "$bin" ]; then
  echo "restarter.sh: no restarter binary at $bin (build it, or set RESTARTER_BIN)" >&2
  exit 127
fi
# explain-restart, status and roll judge contents with the test's digest key, which controller.sh and
# webhook.sh keep in the test's namespace (docs/architecture.md, "Keyed digests").
if [ -n "${NAMESPACE:-}" ] && { [ "${1:-}" = explain-restart ] || [ "${1:-}" = status ] || [ "${1:-}" = roll ]; }; then
  case " $* " in
    *" --digest-key-namespace"*) ;;
    *)
      sub=$1
      shift
      exec "$bin" "$sub" --digest-key-namespace "$NAMESPACE" "$@"
      ;;
  esac
fi
exec "$bin" "$@"
