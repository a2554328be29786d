#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Prepares the real-daemon test environment, idempotently (run as root):
#   1. docker.io and busybox-static installed (apt-get; "update" only if needed),
#   2. a dockerd answering on /var/run/docker.sock (started in the background
#      when the socket does not answer; log in $SBX_DOCKERD_LOG),
#   3. the test image xagent-sandbox-test:latest, imported from a busybox-static
#      root file system (no registry is reachable).
# Prints what it did. Exit status 0 only when all three hold.
#   --daemon-only   1. and 2. alone (tools/demo.sh: the demo runs no test image)

set -euo pipefail

SOCK=/var/run/docker.sock
IMAGE=xagent-sandbox-test:latest
LOG=${SBX_DOCKERD_LOG:-/var/log/sbx-test-dockerd.log}
WAIT=${SBX_DOCKERD_WAIT:-60}

say() { echo "setup-docker: $*"; }
die() { echo "setup-docker: error: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root"

# One run at a time (the e2e files run in parallel, each making sure of the image): the
# next waits here, then finds dockerd answering and the image present.
mkdir -p /run/lock
exec {lock}>/run/lock/xagent-sandbox-setup-docker.lock
flock "$lock"

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
dpkg -s busybox-static >/dev/null 2>&1 || need_pkgs+=(busybox-static)
if [ ${#need_pkgs[@]} -gt 0 ]; then
        say "installing ${need_pkgs[*]}"
        export DEBIAN_FRONTEND=noninteractive
        if ! apt-get install -y --no-install-recommends "${need_pkgs[@]}"; then
                apt-get update
                apt-get install -y --no-install-recommends "${need_pkgs[@]}"
        fi
else
        say "docker.io and busybox-static already installed"
fi

# The CLI first on PATH may be newer than the daemon; it negotiates the API
# version down. Fall back to Debian's CLI if that does not work.
DOCKER=docker
pick_cli() {
        local c
        for c in docker /usr/bin/docker; do
                if "$c" version --format '{{.Server.APIVersion}}' >/dev/null 2>&1; then
                        DOCKER=$c
                        return 0
                fi
        done
        return 1
}

if pick_cli; then
        say "dockerd already answers on $SOCK"
else
        say "starting dockerd (log: $LOG)"
        mkdir -p "$(dirname "$LOG")"
        # own session, so that a test harness reaping its process group does not
        # take the daemon down with it
        # (without the lock: a dockerd holding it would hold every later run)
        setsid -f dockerd --host "unix://$SOCK" >>"$LOG" 2>&1 </dev/null {lock}>&-
        for ((i = 0; i < WAIT * 2; i++)); do
                pick_cli && break
                sleep 0.5
        done
        pick_cli || { tail -n 30 "$LOG" >&2; die "dockerd did not answer within ${WAIT}s"; }
        say "dockerd answers (pid $(cat /var/run/docker.pid 2>/dev/null), pid file /var/run/docker.pid)"
fi
say "using CLI $DOCKER (server API $("$DOCKER" version --format '{{.Server.APIVersion}}'))"
[ "${1:-}" = --daemon-only ] && exit 0

if "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1; then
        say "image $IMAGE already present"
        exit 0
fi

BUSYBOX=/bin/busybox
dpkg -L busybox-static 2>/dev/null | grep -qx /bin/busybox || die "busybox-static does not provide /bin/busybox"
file_out=$(LC_ALL=C ldd "$BUSYBOX" 2>&1 || true)
case "$file_out" in
*"not a dynamic executable"*|*"statically linked"*) ;;
*) die "$BUSYBOX is not statically linked" ;;
esac

ROOTFS=$(mktemp -d /tmp/sbx-test-rootfs.XXXXXX)
trap 'rm -rf "$ROOTFS"' EXIT
say "building $IMAGE from $BUSYBOX in $ROOTFS"
"$(dirname "$0")/make-test-rootfs.sh" "$ROOTFS"
tar -C "$ROOTFS" --numeric-owner -c . | \
        "$DOCKER" import -c 'CMD ["/bin/sh"]' - "$IMAGE" >/dev/null
"$DOCKER" image inspect "$IMAGE" >/dev/null || die "import of $IMAGE failed"
say "imported $IMAGE ($(find "$ROOTFS" -type l | wc -l) applet links)"
