# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the Python benches share: a driver script run as the unprivileged member from
the stack's temp dir, and the interleaved timing of its sides (this module is copied
beside the driver, which imports it)."""

import contextlib
import json
import os
import shutil
import statistics
import sys
import time


def interleaved_medians(sides, rounds, calls):
    """Calls each of sides (name → function) `calls` times a round, the order rotating
    every round, after one warm-up round that is not counted; returns each side's
    median in ms."""
    times = {k: [] for k in sides}
    order = list(sides)
    for rnd in range(rounds + 1):
        order = order[1:] + order[:1]
        for k in order:
            for _ in range(calls):
                t0 = time.perf_counter()
                sides[k]()
                if rnd:
                    times[k].append((time.perf_counter() - t0) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def run_as_member(stack, user, driver, args, copies=()):
    """Writes the driver's text, this module and copies (files or directories) into a
    directory of the stack's temp dir everyone may read, runs the driver there as user
    with that directory on PYTHONPATH, and returns the JSON object its last line prints.
    args may name the directory as "{lib}"."""
    lib = os.path.join(stack.tmp, "bench")
    os.makedirs(lib, exist_ok=True)
    shutil.copy2(os.path.abspath(__file__), lib)
    for c in copies:
        dest = os.path.join(lib, os.path.basename(c))
        if os.path.isdir(c):
            shutil.copytree(c, dest, dirs_exist_ok=True)
        else:
            shutil.copy2(c, dest)
    with open(os.path.join(lib, "driver.py"), "w") as f:
        f.write(driver)
    for dirpath, _, files in os.walk(lib):
        os.chmod(dirpath, 0o755)
        for x in files:
            os.chmod(os.path.join(dirpath, x), 0o755)
    r = stack.run_as(user, ["/usr/bin/env", f"PYTHONPATH={lib}", "/usr/bin/python3", os.path.join(lib, "driver.py")]
                     + [a.format(lib=lib) for a in args], timeout=3600)
    if r.returncode != 0:
        sys.exit(f"driver failed: {r.stderr.strip()}")
    return json.loads(r.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def member_sandbox(root, tag):
    """The private bus + polkitd stack of tests/e2e/stack.py with a running sandbox of
    the member's: yields (stack, build root, the sandbox's name); deleted and stopped
    after."""
    from stack import MEMBER, Stack
    import sandbox_helpers as h

    build = os.environ.get("SBX_BUILD_ROOT", os.path.join(root, "build"))
    stack = Stack(root, build).start()
    bus = h.Sandboxd(stack)
    name = f"bench-{tag}-{os.getpid()}"
    try:
        bus.create(MEMBER, name, h.spec()).result
        yield stack, build, name
    finally:
        try:
            bus.delete(MEMBER, name)
        except Exception as e:  # noqa: BLE001
            print(f"cleanup: {e}", file=sys.stderr)
        stack.stop()
