#!/bin/sh
# flux.sh apply|diff SETTING [IMAGE_TAG] -- EXPECTED...: runs fluxssa (Flux's own library,
# tests/cluster/tools/fluxssa) on manifests.sh's output and fails unless its output is exactly the
# EXPECTED lines ("$NAMESPACE" is filled in; diff: one "Kind/ns/name <jsondiff type> <rm.Diff
# action>" line per object, patch operations indented below; apply: Flux's change set) and, for
# diff, its exit status is 0 (no drift) exactly when every object is "none unchanged".
set -eu
command=$1 setting=$2
shift 2
tag=1
if [ "$1" != -- ]; then tag=$1; shift; fi
[ "$1" = -- ] || { echo "flux.sh: expected -- before the expected lines" >&2; exit 2; }
shift
want=$(printf '%s\n' "$@")
out=$(mktemp)
rc=0
sh ./manifests.sh "$setting" "$tag" | fluxssa "$command" - >"$out" || rc=$?
echo "fluxssa $command (exit $rc):"
cat "$out"
if [ "$(cat "$out")" != "$want" ]; then
  echo "FAIL: fluxssa $command: expected:"
  printf '%s\n' "$want"
  rm -f "$out"
  exit 1
fi
rm -f "$out"
case $command in
  apply) test "$rc" = 0 || { echo "FAIL: fluxssa apply exited $rc"; exit 1; } ;;
  diff)
    drift=1
    if ! printf '%s\n' "$want" | grep -qv ' none unchanged$'; then drift=0; fi
    test "$rc" = "$drift" || { echo "FAIL: fluxssa diff exited $rc, expected $drift"; exit 1; } ;;
esac
