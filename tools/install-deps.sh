#!/bin/bash
# Installs, from Debian 12's packages, everything needed to build xagent-sandboxd and
# run its tests and demo. Idempotent: installs only what is missing. Run as root.
#   --demo   only what tools/demo.sh needs (no test tools, no npm packages of the tests)
set -euo pipefail

# tools/demo.sh's: the build, the engine, the bus and polkit, the Python image's
# debootstrap, node for the MCP client.
demo_packages=(
        gcc meson ninja-build pkg-config
        libsystemd-dev libcurl4-gnutls-dev libjson-c-dev libsqlite3-dev libgnutls28-dev
        libdbus-1-dev libpolkit-gobject-1-dev
        python3 python3-gi python3-dbus
        docker.io dbus dbus-daemon polkitd pkexec libglib2.0-bin systemd
        debootstrap nodejs
)

packages=(
        # build
        gcc meson ninja-build pkg-config
        libsystemd-dev libcurl4-gnutls-dev libjson-c-dev libsqlite3-dev libgnutls28-dev
        # install directories from their pkg-config files
        libdbus-1-dev libpolkit-gobject-1-dev
        # manual pages, completion (and their tests)
        scdoc man-db bash-completion
        # the Debian package (tools/build-deb.sh) and its check
        debhelper dpkg-dev fakeroot lintian dh-python
        # tests
        check valgrind python3 file acl
        # certificates of the remote-engine tests (tests/e2e/test_tls_engine.py)
        gnutls-bin
        # the channel protocol's fuzzing (tools/fuzz.sh: libFuzzer)
        clang libclang-rt-14-dev
        python3-pytest python3-gi
        # the real things the service talks to
        docker.io busybox-static
        # egress: nft loads a sandbox's rules in its network namespace (docs/security.md)
        nftables iproute2
        # gVisor as a sandbox runtime, for tests/e2e/test_gvisor.py (docs/security.md, "Runtimes")
        runsc
        # the registry of tests/e2e/test_pull.py (certificates by gnutls-bin's certtool)
        docker-registry
        # Podman as the engine, for tests/e2e/test_podman.py only (the package does not
        # depend on it): rootful, its Docker-compatible service; netavark for its bridge
        podman netavark aardvark-dns
        dbus dbus-daemon polkitd pkexec python3-dbus libglib2.0-bin systemd
        # the installation check on a booted systemd machine
        debootstrap systemd-container
        # the MCP clients of tests/e2e/test_mcp*.py (npm below)
        nodejs
        # the Cockpit page's test (tests/e2e/test_cockpit.py): Cockpit's web service and
        # bridge, its shell (whose stylesheet the page uses), and the browser that
        # playwright-core (npm below) drives; sudo for Cockpit's administrative access
        # (given to a test user only inside cockpit-ws's own mount namespace)
        cockpit-ws cockpit-bridge cockpit-system chromium sudo
)
demo=
if [ "${1:-}" = --demo ]; then
        demo=1
        packages=("${demo_packages[@]}")
fi
# npm comes with nodejs from NodeSource; Debian's nodejs needs its npm package.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
        echo "install-deps: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The npm packages of the tests, at the exact versions of each package-lock.json, into
# the git-ignored node_modules next to it (again whenever the lock file is newer): the
# MCP clients (tests/mcp) and playwright-core for the Cockpit page (tests/cockpit).
here="$(cd "$(dirname "$0")/.." && pwd)"
[ -z "$demo" ] || exit 0
for dir in tests/mcp tests/cockpit; do
        if [ ! -e "$here/$dir/node_modules/.package-lock.json" ] ||
           [ "$here/$dir/package-lock.json" -nt "$here/$dir/node_modules/.package-lock.json" ]; then
                echo "install-deps: npm ci --prefix $dir"
                npm ci --prefix "$here/$dir" --no-audit --no-fund --loglevel=error
        fi
done
