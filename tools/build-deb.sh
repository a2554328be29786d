#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds the Debian package from this tree, as `dpkg-buildpackage -us -uc -b` in a
# clean copy of it (without Git's data and build directories; dpkg-buildpackage
# writes its results next to the tree it builds), and puts the .deb, .buildinfo and
# .changes into OUTDIR. With --lintian, lintian checks them and any error or warning
# fails.
# Prints the path of the .deb on its last line.
#
# Usage: tools/build-deb.sh [--lintian] OUTDIR
# Needs the Build-Depends of debian/control (tools/install-deps.sh installs them).

set -euo pipefail

lintian=0
if [ "${1:-}" = --lintian ]; then
        lintian=1
        shift
fi
[ $# -eq 1 ] || { echo "usage: $0 [--lintian] OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)

# The package's version is the project's.
version=$(sed -n "s/^ *version : '\([^']*\)',$/\1/p" "$src/meson.build")
deb_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
if [ "$version" != "$deb_version" ]; then
        echo "build-deb: debian/changelog is at $deb_version, meson.build at $version: add a changelog entry" >&2
        exit 1
fi

work=$(mktemp -d /var/tmp/xagent-build-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
tree=$work/xagent-sandboxd-$version
mkdir "$tree"
excludes=(--exclude=./.git --exclude=__pycache__)
for d in "$src"/*/; do
        [ -d "$d/meson-private" ] && excludes+=("--exclude=./$(basename "$d")")
done
tar -C "$src" "${excludes[@]}" -c . | tar -C "$tree" -x

echo "build-deb: dpkg-buildpackage -us -uc -b in $tree"
(cd "$tree" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
        dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
        { tail -n 40 "$work/build.log"; echo "build-deb: dpkg-buildpackage failed" >&2; exit 1; }
grep -E '^dpkg-deb: building package' "$work/build.log"

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
changes=xagent-sandboxd_${version}_${arch}.changes
deb=xagent-sandboxd_${version}_${arch}.deb
# Everything the .changes lists (the package, its -dbgsym, the .buildinfo), and it.
for f in $(sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]\{32\} .* \([^ ]*\)$/\1/p' "$work/$changes") "$changes"; do
        mv "$work/$f" "$out/"
done

if [ $lintian -eq 1 ]; then
        echo "build-deb: lintian $changes"
        # As root lintian complains about root; as nobody it needs the files readable,
        # wherever OUTDIR is: a world-readable copy.
        check=$work/lintian
        mkdir -m 0755 "$check"
        chmod 0755 "$work"
        for f in $(sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]\{32\} .* \([^ ]*\)$/\1/p' "$out/$changes") "$changes"; do
                install -m 0644 "$out/$f" "$check/"
        done
        # An error or a warning fails: an expected one is overridden, with the reason,
        # in debian/xagent-sandboxd.lintian-overrides (shown as O:). Not --fail-on error:
        # with --show-overrides it counts overridden errors too.
        runuser -u nobody -- env HOME=/nonexistent \
                lintian --fail-on none --display-info --show-overrides "$check/$changes" >"$work/lintian.log" 2>&1 ||
                { cat "$work/lintian.log"; echo "build-deb: lintian failed" >&2; exit 1; }
        cat "$work/lintian.log"
        summary=
        for t in E W I O; do
                summary+=" $t=$(grep -c "^$t: " "$work/lintian.log" || true)"
        done
        echo "build-deb: lintian tags (E error, W warning, I info, O overridden):$summary"
        if grep -q '^[EW]: ' "$work/lintian.log"; then
                echo "build-deb: lintian found errors or warnings" >&2
                exit 1
        fi
fi
echo "$out/$deb"
