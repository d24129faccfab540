#!/usr/bin/env bash
# cmd/release.sh's refusals of bad input, each before anything is built or pushed (seconds, no
# cluster): in a throwaway clone of this checkout's HEAD, with a commit per case where the case
# is a committed file.
#   a dirty checkout                     "uncommitted changes"
#   a VERSION that is not semver          "not a semantic version"
#   --version naming another version     "bump VERSION in a commit first"
#   no CHANGELOG section for VERSION      "CHANGELOG.md has no section"
#   no key, an unset COSIGN_PASSWORD      "--key is required", "COSIGN_PASSWORD is not set"
#   a registry that is down               "is not reachable" (a closed loopback port)
#   --publish of a tampered directory     "does not match its checksums"
#   an unknown flag, a bad --registry     exit 2 and the hint
# Exit status: 0 when every case was refused with its reason and the right exit status.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/release-refusals.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
git clone --quiet --no-hardlinks "$repo" "$work/repo"
git -C "$work/repo" config user.email ci@example.org
git -C "$work/repo" config user.name ci
release=$work/repo/cmd/release.sh
key=$work/cosign.key
: >"$key"

# expect STATUS TEXT ARGS...: cmd/release.sh ARGS exits STATUS and says TEXT.
expect() {
  local want=$1 text=$2 out rc=0
  shift 2
  out=$("$release" "$@" 2>&1) || rc=$?
  if [[ $rc -ne $want || $out != *"$text"* ]]; then
    echo "FAIL: release.sh $* exited $rc (want $want) and said: $out" >&2
    failed=1
  else
    echo "refused ($rc): $* -> $(grep -F -- "$text" <<<"$out" | head -n1)"
  fi
}
commit() { git -C "$work/repo" commit --quiet -am "$1"; }
push_args=(--registry 127.0.0.1:1/test --key "$key" --source-url https://example.org/restarter)

export COSIGN_PASSWORD=x
expect 2 "unknown argument" --frobnicate
expect 2 "--registry must be HOST" --registry 'Not A Registry' --key "$key" --source-url https://example.org/r
expect 2 "--key is required" --registry 127.0.0.1:1 --source-url https://example.org/restarter
expect 2 "--source-url must be" --registry 127.0.0.1:1 --key "$key"
(unset COSIGN_PASSWORD; expect 2 "COSIGN_PASSWORD is not set" "${push_args[@]}")
expect 2 "but VERSION holds" "${push_args[@]}" --version 99.0.0
echo "# dirty" >>"$work/repo/README.md"
expect 1 "uncommitted changes" "${push_args[@]}"
git -C "$work/repo" checkout --quiet README.md
expect 1 "is not reachable" "${push_args[@]}"
echo 1.2 >"$work/repo/VERSION"; commit "a VERSION that is not semver"
expect 2 "not a semantic version" "${push_args[@]}"
echo 99.0.0 >"$work/repo/VERSION"; commit "a version without release notes"
expect 1 "CHANGELOG.md has no section '## 99.0.0'" "${push_args[@]}"
# A --no-push directory whose files changed after it was written.
mkdir -p "$work/dist"
echo '{"version": "99.0.0", "image": "127.0.0.1:1/test/restarter"}' >"$work/dist/release.json"
(cd "$work/dist" && sha256sum release.json >checksums.txt)
echo tampered >>"$work/dist/release.json"
expect 1 "does not match its checksums" --publish "$work/dist" "${push_args[@]}"
exit $failed
