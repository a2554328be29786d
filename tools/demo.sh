#!/bin/bash
# The README's first command: installs what is needed, builds, brings up a Docker
# daemon (if none answers) and the local test image, then runs the main job for real
# (tools/demo.py): a verified sandbox lifecycle through the bus, as an unprivileged
# user, every step printed. Run as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
if [ -d build ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build >/dev/null
tests/setup-docker.sh
exec /usr/bin/python3 tools/demo.py
