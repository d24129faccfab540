# shellcheck shell=bash
# Stopping the real node (lib/node.sh) and removing everything it made (the layout at the top of
# node.sh): its processes, its containers and shims, its mounts, its cgroups, its files. Sourced,
# never executed. Uses common.sh, run.sh and node.sh.

# Grace of kubelet and kube-proxy at `down` (neither has anything to flush); containerd's (and the
# policy controller's: netpol.sh).
NODE_STOP_GRACE_SECONDS=10

# SIGKILL every process in the node's cgroups (the containers, the pods' sandboxes) until none is
# left, for 10 s at most.
kill_node_containers() {
  local h pids tries=0
  while ((tries++ < 100)); do
    pids=$(while read -r h; do
        [[ -d $h/$NODE_CGROUP ]] && find "$h/$NODE_CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null
      done < <(cgroup_hierarchies) | sort -u)
    [[ -n $pids ]] || return 0
    # shellcheck disable=SC2086  # one PID a word
    as_root kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  log "warning: processes still in the cgroups of $NODE_CGROUP: $pids"
}

# SIGKILL the shims of this cluster's containerd: each has `-address <our socket>` on its command
# line. A shim outlives containerd by design; its containers are gone by now.
kill_node_shims() {
  local f pids=() pid
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    # The command line's NULs become newlines.
    if grep -qxF -- "$CONTAINERD_SOCK" <<<"$({ tr '\0' '\n' <"$f"; } 2>/dev/null)"; then pids+=("$pid"); fi
  done
  ((${#pids[@]})) || return 0
  as_root kill -KILL "${pids[@]}" 2>/dev/null || true
}

# Print the mount points at or under $NODE_DIR, deepest first (mountinfo escapes spaces as \040).
node_mounts() {
  awk -v dir="$NODE_DIR" '{ p = $5; gsub(/\\040/, " ", p); if (p == dir || index(p, dir "/") == 1) print p }' \
    /proc/self/mountinfo | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-
}

# Unmount everything under $NODE_DIR (containers' root filesystems, pods' volumes and network
# namespaces), then $NODE_DIR itself. A busy one is detached (umount -l).
unmount_node() {
  local mp mps=() passes=0
  while ((passes++ < 5)); do
    mapfile -t mps < <(node_mounts)
    ((${#mps[@]})) || return 0
    for mp in "${mps[@]}"; do
      as_root umount "$mp" 2>/dev/null || as_root umount -l "$mp" 2>/dev/null || true
    done
  done
  node_mounts | sed 's/^/cluster: warning: still mounted: /' >&2
}

# rmdir the node's cgroups, deepest first, in every hierarchy (a cgroup goes once its last process
# has exited, which may take a moment after SIGKILL).
remove_node_cgroups() {
  local h tries
  while read -r h; do
    tries=0
    while [[ -d $h/$NODE_CGROUP ]] && ((tries++ < 50)); do
      as_root find "$h/$NODE_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null || sleep 0.1
    done
    [[ ! -d $h/$NODE_CGROUP ]] || log "warning: could not remove the cgroup $h/$NODE_CGROUP"
  done < <(cgroup_hierarchies)
}

# Stop the real node and remove everything it made (see the top of node.sh). Safe when it never
# ran, and after a crash: it goes by what is there (cgroups, command lines, mounts), not by what was
# recorded. Fast when there is nothing: $NODE_DIR is the first thing the node makes and the last
# this removes. netns-goes (from `down`): the namespace side is left to the namespace's
# deletion; netns-stays (the node alone stops): it is removed here.
#   stop_node netns-goes|netns-stays
stop_node() {
  stop_netpol "$1"     # the node's policy controller (lib/netpol.sh), if it ran
  [[ -e $NODE_DIR || -f $NODE_MARKER ]] || return 0
  # The kubelet first, so that it does not restart the containers killed next.
  stop_components "$NODE_STOP_GRACE_SECONDS" kube-proxy kubelet
  kill_node_containers
  stop_components "$NODE_STOP_GRACE_SECONDS" containerd registry
  kill_node_shims
  unmount_node
  remove_node_cgroups
  # The namespace side, when only the node stops: kube-proxy's rules, the bridge and with it the
  # Service route.
  if [[ $1 == netns-stays ]] && netns_exists; then
    if [[ -x $BIN_DIR/kube-proxy ]]; then node_exec "$BIN_DIR/kube-proxy" --cleanup >/dev/null 2>&1 || true; fi
    node_exec ip link del "$NODE_BRIDGE" 2>/dev/null || true
  fi
  as_root rm -rf "$SHIM_SOCKET_DIR"
  as_root rmdir /run/restarter 2>/dev/null || true
  local link
  for link in /var/log/containers/*; do
    [[ -L $link && $(readlink "$link") == "$NODE_DIR"/* ]] && as_root rm -f "$link"
  done
  as_root rm -f /var/lib/cni/results/"restarter-$CLUSTER_NAME"-*
  # libcni makes these directories again at every write; /var/log/containers stays (a running
  # kubelet of another cluster makes it only at its start).
  as_root rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true
  # Never remove what might still be a mount of something else's files.
  if [[ -n $(node_mounts) ]]; then
    log "warning: leaving $NODE_DIR in place: mounts remain under it"
  else
    as_root rm -rf "$NODE_DIR"
  fi
  rm -f "$NODE_MARKER"
}

