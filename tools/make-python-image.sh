#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Makes the image xagent-sandbox-python:latest from Debian's own packages, idempotently
# (run as root, after tests/setup-docker.sh; tools/demo.sh runs it): python3 on a minimal Debian 12 root made by
# debootstrap, imported into Docker. The root is made once and kept as a tar in
# $SBX_PYTHON_ROOT_CACHE (default /var/cache/xagent-sandboxd/python-root.tar), like the
# booted-machine test's root (tests/systemd-machine/). The README's and docs/' Python
# examples run in this image. SBX_DEBIAN_MIRROR: the mirror (default: debootstrap's).
#   --remove   removes the image (the cache stays)

set -euo pipefail

IMAGE=xagent-sandbox-python:latest
CACHE=${SBX_PYTHON_ROOT_CACHE:-/var/cache/xagent-sandboxd/python-root.tar}
MIRROR=${SBX_DEBIAN_MIRROR:-}
# What the root holds beyond minbase: what the examples run (python3, its http.server, make).
PACKAGES=(python3 make)

say() { echo "make-python-image: $*"; }
die() { echo "make-python-image: error: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root"
if [ "${1:-}" = --remove ]; then
        docker image rm "$IMAGE" >/dev/null 2>&1 && say "removed $IMAGE" || true
        exit 0
fi
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
        say "image $IMAGE already present"
        exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap is not installed (tools/install-deps.sh)"

mkdir -p "$(dirname "$CACHE")"
exec 9>"$CACHE.lock"
flock 9
if [ -f "$CACHE" ] && [ "$(cat "$CACHE.packages" 2>/dev/null)" = "${PACKAGES[*]}" ]; then
        say "root file system cached: $CACHE ($(du -h "$CACHE" | cut -f1))"
else
        ROOT=$(mktemp -d /var/tmp/xagent-python-root.XXXXXX)
        trap 'rm -rf "$ROOT"' EXIT
        t0=$SECONDS
        say "debootstrap bookworm with ${PACKAGES[*]} into $ROOT"
        LOGF=$(mktemp /var/tmp/xagent-python-root.log.XXXXXX)
        debootstrap --variant=minbase --include="$(IFS=,; echo "${PACKAGES[*]}")" \
                bookworm "$ROOT" ${MIRROR:+"$MIRROR"} >"$LOGF" 2>&1 ||
                { tail -n 30 "$LOGF"; die "debootstrap failed (log: $LOGF)"; }
        rm -f "$LOGF"
        # What an image does not need: apt's caches and lists, the docs.
        rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* \
                "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/locale/*
        tar -C "$ROOT" --numeric-owner -cf "$CACHE.new" .
        echo "${PACKAGES[*]}" >"$CACHE.packages"
        mv "$CACHE.new" "$CACHE"
        rm -rf "$ROOT"
        trap - EXIT
        say "made in $((SECONDS - t0)) s ($(du -h "$CACHE" | cut -f1))"
fi
docker import -c 'CMD ["/bin/sh"]' -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        "$CACHE" "$IMAGE" >/dev/null
docker image inspect "$IMAGE" >/dev/null || die "import of $IMAGE failed"
say "imported $IMAGE"
