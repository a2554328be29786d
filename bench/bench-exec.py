#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Exec through the bus against the same Docker exec calls made directly, and against
`docker exec`: ExecSandbox(["true"]) round trips (target: <= 1.3x the direct calls on
a persistent connection), and 20 MB of output streamed through StartExec into a pipe
(target: within 1.5x of reading it off Docker directly). Sides run interleaved after a
warm-up; medians are printed. Asserts nothing (a benchmark, not a test).

Needs root, a Docker daemon and the test image (tests/setup-docker.sh). The bus side
runs as the unprivileged group member sbx-member (a real polkit check per call; the
daemon answers reads from its cache, exec asks polkit each time)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER, Stack  # noqa: E402
import sandbox_helpers as h  # noqa: E402


def run_json(stack, argv, as_member):
    if as_member:
        r = stack.run_as(MEMBER, argv, timeout=600)
    else:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=stack.address))
    if r.returncode != 0:
        sys.exit(f"{argv[1]} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def docker_exec_ms(cid, user, n):
    t = []
    for _ in range(n):
        t0 = time.monotonic()
        subprocess.run(["docker", "exec", "-u", user, cid, "true"], check=True, capture_output=True)
        t.append((time.monotonic() - t0) * 1e3)
    return statistics.median(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    ap.add_argument("--calls", type=int, default=20, help="exec round trips per round and side")
    ap.add_argument("--bytes", type=int, default=20_000_000)
    a = ap.parse_args()

    build = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
    exe = os.path.join(build, "bench", "bench-exec")
    stack = Stack(ROOT, build).start()
    bus = h.Sandboxd(stack)
    name = f"bench-exec-{os.getpid()}"
    user = f"{h.uid_of(MEMBER)}:{h.gid_of(MEMBER)}"
    rt = {"direct": [], "bus": [], "docker exec": []}
    st = {"direct": [], "bus": []}
    try:
        bus.create(MEMBER, name, h.spec()).result
        cid = bus.inspect(MEMBER, name).result[0]["container_id"]
        run_json(stack, [exe, "bus", name, "3"], True)            # warm-up
        run_json(stack, [exe, "direct", cid, user, "3"], False)
        for _ in range(a.rounds):
            rt["direct"].append(run_json(stack, [exe, "direct", cid, user, str(a.calls)], False)["median_ms"])
            rt["bus"].append(run_json(stack, [exe, "bus", name, str(a.calls)], True)["median_ms"])
            rt["docker exec"].append(docker_exec_ms(cid, user, max(3, a.calls // 4)))
            st["direct"].append(run_json(stack, [exe, "direct-stream", cid, user, str(a.bytes)], False))
            st["bus"].append(run_json(stack, [exe, "bus-stream", name, str(a.bytes)], True))
    finally:
        bus.delete(MEMBER, name)
        stack.stop()

    d = statistics.median(rt["direct"])
    print(f"exec `true` round trip, median of {a.rounds} rounds x {a.calls} calls (ms):")
    for side in rt:
        m = statistics.median(rt[side])
        print(f"  {side:<12} {m:8.2f}   {m / d:5.2f}x direct")
    for side in st:
        assert all(x["bytes"] >= a.bytes for x in st[side]), f"{side}: bytes missing"
    ds = statistics.median(x["seconds"] for x in st["direct"])
    print(f"{a.bytes / 1e6:.0f} MB of output streamed, median of {a.rounds} (s, MB/s):")
    for side in st:
        s = statistics.median(x["seconds"] for x in st[side])
        print(f"  {side:<12} {s:8.3f}   {a.bytes / 1e6 / s:7.1f} MB/s   {s / ds:5.2f}x direct")


if __name__ == "__main__":
    sys.exit(main())
