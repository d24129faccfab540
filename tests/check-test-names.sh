#!/usr/bin/env bash
# Fails when a Catch2 test name would break ctest discovery: ctest hands each name to the test
# binary as a filter, and Catch2 v2 reads a leading '-' as a flag and ',' as a filter separator,
# while CMake splits on ';' and '[' starts a tag. Such a test then fails, or silently runs nothing.
set -euo pipefail
cd "$(dirname "$0")"
bad=$(grep -rnE 'TEST_CASE\("(-|[^"]*[,;\[\\])' --include='*.cpp' unit integration 2>/dev/null || true)
if [ -n "$bad" ]; then
  echo "test names that ctest cannot pass to Catch2 (no leading '-', no , ; [ or \\):"
  echo "$bad"
  exit 1
fi
echo "test names ok"
