#!/bin/sh
# await.sh JQ_FILTER: ../../lib/status-await.sh with serve-controller's --ondelete-ready-timeout
# (10s), so that status judges a stuck replacement as the controller does.
exec sh ../../lib/status-await.sh "$1" --ondelete-ready-timeout 10s
