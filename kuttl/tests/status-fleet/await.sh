#!/bin/sh
# await.sh JQ_FILTER: ../../lib/status-await.sh with status's default flags.
exec sh ../../lib/status-await.sh "$1"
