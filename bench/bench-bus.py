#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The full-path benchmark: a D-Bus client → xagent-sandboxd → Docker, against the
same Docker calls made directly with the same client (bench-bus.c). Runs the two
sides interleaved, cycle by cycle, after warm-up, and prints medians and ratios.
Targets (issue 4): cycle ratio <= 1.10, inspect p50 <= 2x direct. This
prints the figures; it asserts nothing (a benchmark, not a test).

Needs root, a Docker daemon and the test image (tests/setup-docker.sh). The bus side
runs as the unprivileged group member sbx-member, so each call also goes through a
real polkit check.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER, Stack  # noqa: E402

PHASES = ("create", "verify", "stop", "delete", "cycle", "inspect_p50")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--image", default="xagent-sandbox-test:latest")
    ap.add_argument("--as-root", action="store_true",
                    help="call the bus as root (no polkit check) instead of as sbx-member")
    a = ap.parse_args()

    build = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
    exe = os.path.join(build, "bench", "bench-bus")
    stack = Stack(ROOT, build).start()
    results = {"direct": [], "bus": []}
    try:
        for i in range(a.warmup + a.cycles):
            for side in ("direct", "bus"):
                argv = [exe, side, a.image, f"bench-{os.getpid()}-{side}-{i}"]
                if side == "bus" and not a.as_root:
                    r = stack.run_as(MEMBER, argv, timeout=300)
                else:
                    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=stack.address)
                    r = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
                if r.returncode != 0:
                    sys.exit(f"{side} cycle {i} failed: {r.stderr.strip()}")
                if i >= a.warmup:
                    results[side].append(json.loads(r.stdout))
    finally:
        stack.stop()

    print(f"{a.cycles} interleaved cycles (after {a.warmup} warm-up), medians in ms")
    print(f"{'phase':<12} {'direct':>9} {'bus':>9} {'ratio':>7}")
    for p in PHASES:
        d = statistics.median(x[p] for x in results["direct"])
        b = statistics.median(x[p] for x in results["bus"])
        print(f"{p:<12} {d:>9.2f} {b:>9.2f} {b / d:>7.2f}")


if __name__ == "__main__":
    sys.exit(main())
