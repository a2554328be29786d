#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Commands over the kept channel against the raw Docker exec API, in one run,
interleaved after a warm-up: ExecSandbox(["true"]) round trips (target <= 0.15x a raw
Docker exec on a persistent connection), 16 execs at once (target >= 3x raw Docker's
rate), and 16 at once with option wait under the default limits (target: all 16
succeed). Medians are printed with their ratios. Asserts nothing (a benchmark).

Needs root, a Docker daemon and the test image (tests/setup-docker.sh). The bus side
runs as the unprivileged group member sbx-member (a real polkit check per call)."""

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from stack import MEMBER, Stack  # noqa: E402
import sandbox_helpers as h  # noqa: E402
from importlib import import_module  # noqa: E402

run_json = import_module("bench-exec").run_json


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    ap.add_argument("--calls", type=int, default=20, help="exec round trips per round and side")
    ap.add_argument("--parallel", type=int, default=16, help="execs at once")
    ap.add_argument("--each", type=int, default=4, help="execs of each of them per round")
    a = ap.parse_args()

    build = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
    exe = os.path.join(build, "bench", "bench-exec")
    stack = Stack(ROOT, build).start()
    bus = h.Sandboxd(stack)
    name = f"bench-chan-{os.getpid()}"
    user = f"{h.uid_of(MEMBER)}:{h.gid_of(MEMBER)}"
    rt = {"docker": [], "bus": []}
    par = {"docker": [], "bus": []}
    waited = []
    k, n = str(a.parallel), str(a.each)
    try:
        bus.create(MEMBER, name, h.spec()).result
        cid = bus.inspect(MEMBER, name).result[0]["container_id"]
        run_json(stack, [exe, "bus", name, "3"], True)            # warm-up: the channel opens
        run_json(stack, [exe, "direct", cid, user, "3"], False)
        for _ in range(a.rounds):
            rt["docker"].append(run_json(stack, [exe, "direct", cid, user, str(a.calls)], False)["median_ms"])
            rt["bus"].append(run_json(stack, [exe, "bus", name, str(a.calls)], True)["median_ms"])
            par["docker"].append(run_json(stack, [exe, "direct-parallel", cid, user, k, n], False))
            par["bus"].append(run_json(stack, [exe, "bus-parallel", name, k, n, "0"], True))
            waited.append(run_json(stack, [exe, "bus-parallel", name, k, "1", "60"], True))
    finally:
        bus.delete(MEMBER, name)
        stack.stop()

    d = statistics.median(rt["docker"])
    print(f"exec `true` round trip, median of {a.rounds} rounds x {a.calls} calls (ms):")
    for side in rt:
        m = statistics.median(rt[side])
        print(f"  {side:<8} {m:8.2f}   {m / d:5.2f}x raw Docker")
    dr = statistics.median(x["per_s"] for x in par["docker"])
    print(f"{a.parallel} execs at once, {a.each} each, median of {a.rounds} rounds (execs/s):")
    for side in par:
        r = statistics.median(x["per_s"] for x in par[side])
        failed = sum(x["failed"] for x in par[side])
        print(f"  {side:<8} {r:8.1f}   {r / dr:5.2f}x raw Docker   failed: {failed}")
    ok = [x["ok"] for x in waited]
    print(f"{a.parallel} at once with wait under the default limits: succeeded {ok} of {a.parallel} "
          f"(errors: {sorted(set(x['error'] for x in waited if x['error']))})")


if __name__ == "__main__":
    sys.exit(main())
