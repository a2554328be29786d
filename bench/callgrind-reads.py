#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Instructions per read in the daemon (callgrind: stable on a noisy machine, unlike
the ratios). The daemon runs under `valgrind --tool=callgrind` in the e2e stack; one
sandbox of the member's; the counters are zeroed after a warm-up, then --calls
InspectSandbox (and as many VerifySandbox) calls are made by bench-read as the member,
and the daemon's instructions (all threads) are dumped and divided by the calls.
With --max-age 0 the reads ask Docker each time (as before observations)."""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

import sandbox_helpers as h  # noqa: E402
from stack import MEMBER, Stack  # noqa: E402


def total_ir(out_dir):
    total = 0
    for f in glob.glob(os.path.join(out_dir, "callgrind.out.*")):
        with open(f) as fh:
            for line in fh:
                m = re.match(r"^(?:summary|totals): (\d+)", line)
                if m:
                    total += int(m.group(1))
                    break
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--max-age", type=int, default=600, help="observation_max_age for the run")
    ap.add_argument("--keep", metavar="DIR", help="copy each method's callgrind output here (callgrind_annotate)")
    ap.add_argument("--build", default=os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build")))
    a = ap.parse_args()
    exe = os.path.join(os.path.abspath(a.build), "bench", "bench-read")
    out_dir = tempfile.mkdtemp(prefix="sbx-callgrind-", dir="/var/tmp")
    stack = Stack(ROOT, os.path.abspath(a.build)).start()
    bus = h.Sandboxd(stack)
    name = f"cg-{os.getpid()}"
    try:
        h.write_config(stack, {"observation_max_age": a.max_age})
        stack.set_daemon_command(["/usr/bin/valgrind", "--tool=callgrind", "--separate-threads=no",
                                  f"--callgrind-out-file={out_dir}/callgrind.out.%p"]
                                 + stack.default_daemon_argv())
        bus.call(MEMBER, "GetPolicy", timeout=120).result
        bus.create(MEMBER, name, h.spec(), timeout=120).result
        per = {}
        for method, argv in (("inspect", ["bus-inspect", name, "5"]),
                             ("verify", ["bus-verify", name, h.TEST_IMAGE, "5"])):
            stack.run_as(MEMBER, [exe] + argv, timeout=300, check=True)         # warm
            pid = stack.daemon_pid()
            subprocess.run(["callgrind_control", "-z", str(pid)], check=True, capture_output=True)
            for f in glob.glob(os.path.join(out_dir, "callgrind.out.*")):
                os.unlink(f)
            argv[-1] = str(a.calls)
            stack.run_as(MEMBER, [exe] + argv, timeout=600, check=True)
            subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)
            # the first (untimed) call of bench-read is counted too
            per[method] = total_ir(out_dir) / (a.calls + 1)
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                for f in glob.glob(os.path.join(out_dir, "callgrind.out.*")):
                    shutil.copy(f, os.path.join(a.keep, f"{method}.{os.path.basename(f)}"))
        print(f"observation_max_age {a.max_age}: instructions per read in the daemon: "
              f"InspectSandbox {per['inspect']:,.0f}, VerifySandbox {per['verify']:,.0f}")
        bus.delete(MEMBER, name, timeout=120).result
    finally:
        stack.stop()
        subprocess.run(["rm", "-rf", out_dir])


if __name__ == "__main__":
    sys.exit(main())
