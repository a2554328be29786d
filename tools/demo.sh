#!/bin/bash
# The README's first command: installs what the demo needs from Debian's packages,
# builds what it runs (the daemon, the client, the sandbox init, the MCP server: no
# tests), brings up a Docker daemon (if none answers), the Python image (Debian's
# python3, tools/make-python-image.sh) and the MCP SDK client (tools/demo-mcp: that
# package alone), then runs the main job for real (tools/demo.py): an agent's day with a
# sandbox through the bus, as an unprivileged user, every step printed and checked.
# What it made for the demo (the image, if it was not there) is removed after. Run as
# root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=xagent-sandbox-python:latest

tools/install-deps.sh --demo
[ -d build ] || meson setup build -Dtests=false >/dev/null
ninja -C build src/daemon/xagent-sandboxd src/ctl/xagent-sandboxctl src/init/xagent-sandbox-init \
        src/mcp/xagent-sandbox-mcp >/dev/null
tests/setup-docker.sh --daemon-only
made_image=
docker image inspect "$IMAGE" >/dev/null 2>&1 || made_image=1
tools/make-python-image.sh
if [ ! -e tools/demo-mcp/node_modules/.package-lock.json ] ||
   [ tools/demo-mcp/package-lock.json -nt tools/demo-mcp/node_modules/.package-lock.json ]; then
        npm ci --prefix tools/demo-mcp --no-audit --no-fund --loglevel=error
fi
status=0
/usr/bin/python3 tools/demo.py || status=$?
[ -z "$made_image" ] || tools/make-python-image.sh --remove
exit $status
