#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Fills the empty directory DIR with the test image's root file system: busybox-static
# and its applet links, /etc/passwd and /etc/group with root and nobody. Its one
# definition, used by tests/setup-docker.sh (the shared dockerd) and by the tests'
# private engines (tests/e2e/privengine.py), which import it each their own way.
#   make-test-rootfs.sh DIR

set -euo pipefail

[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: $0 EMPTY-DIR" >&2; exit 2; }
ROOTFS=$1
BUSYBOX=/bin/busybox

mkdir -p "$ROOTFS"/{bin,sbin,usr/bin,usr/sbin,tmp,home,etc,root,proc,sys,dev,var/tmp}
chmod 1777 "$ROOTFS/tmp" "$ROOTFS/var/tmp"
chmod 0755 "$ROOTFS/home"
cp "$BUSYBOX" "$ROOTFS/bin/busybox"
chroot "$ROOTFS" /bin/busybox --install -s
cat >"$ROOTFS/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$ROOTFS/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
