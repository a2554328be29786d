#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""An agent's first result from a warm pool (issue 37: at most 1.3x): ClaimSandbox (warm) +
ExecSandbox(["echo", "hi"]) against an ExecSandbox(["echo", "hi"]) in a running sandbox,
on the isolated spec (network_isolated) and on the bridge spec, in one run. The host
policy pools 2 members of each for the member; one persistent Gio connection in one
process as the unprivileged member sbx-member; per round, after the pools were given time
to refill (not timed), each side once in a rotating order. A claim that came out cold
(its pool not refilled yet) is counted apart, never in the warm median. Every claimed
sandbox is deleted at once (not timed). Prints medians and ratios; asserts nothing.

Needs root, a Docker daemon and the test image (tests/setup-docker.sh); starts the private
bus + polkitd stack of tests/e2e/stack.py."""

import argparse
import os
import subprocess
import sys
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER  # noqa: E402
from member_bench import member_sandbox, run_as_member  # noqa: E402
import sandbox_helpers as h  # noqa: E402

DRIVER = textwrap.dedent("""
    import json, statistics, sys, time
    from gi.repository import Gio, GLib

    rounds, refill_s = int(sys.argv[1]), float(sys.argv[2])
    addr = Gio.dbus_address_get_for_bus_sync(Gio.BusType.SYSTEM, None)
    conn = Gio.DBusConnection.new_for_address_sync(
        addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    IMAGE = GLib.Variant("s", "xagent-sandbox-test:latest")
    SPECS = {"isolated": {"image": IMAGE, "network_isolated": GLib.Variant("b", True)},
             "bridge": {"image": IMAGE}}

    def call(method, sig, args):
        return conn.call_sync("org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.xagent.Sandbox1.Manager",
                              method, GLib.Variant(sig, args), None, Gio.DBusCallFlags.NONE, 120000, None)

    def echo(name):
        call("ExecSandbox", "(sasa{sv})", (name, ["echo", "hi"], {}))

    running = {}
    for kind, spec in SPECS.items():
        running[kind] = "bench-pools-%s-%d" % (kind, int(time.time()))
        call("CreateSandbox", "(sa{sv}a{sv})", (running[kind], spec, {}))
    times = {k: [] for k in ("claim_isolated", "exec_isolated", "claim_bridge", "exec_bridge")}
    cold = {"isolated": 0, "bridge": 0}
    try:
        order = list(times)
        for rnd in range(rounds + 1):
            time.sleep(refill_s)
            order = order[1:] + order[:1]
            for k in order:
                side, kind = k.split("_")
                t0 = time.perf_counter()
                if side == "exec":
                    echo(running[kind])
                    ms = (time.perf_counter() - t0) * 1000
                else:
                    r = call("ClaimSandbox", "(a{sv}a{sv})",
                             (SPECS[kind], {"name_prefix": GLib.Variant("s", "bench" + kind[0])})).unpack()
                    echo(r[1])
                    ms = (time.perf_counter() - t0) * 1000
                    call("DeleteSandbox", "(s)", (r[1],))
                    if r[3] != "warm":
                        cold[kind] += 1
                        continue
                if rnd:
                    times[k].append(ms)
    finally:
        for name in running.values():
            call("DeleteSandbox", "(s)", (name,))
    out = {k: statistics.median(v) if v else None for k, v in times.items()}
    out["n"] = {k: len(v) for k, v in times.items()}
    out["cold"] = cold
    print(json.dumps(out))
""")


def pool(kind, spec):
    return {"user": MEMBER, "spec": spec, "options": {"name_prefix": "bench" + kind[0]}, "size": 2}


def remove_members():
    """The members the run's pools left (the policy is gone: nothing replaces them)."""
    out = subprocess.run(["docker", "ps", "-aq", "--filter", "label=xagent.sandbox.pool"], capture_output=True,
                         text=True).stdout.split()
    for cid in out:
        status, c = h.docker("GET", f"/containers/{cid}/json")
        if status == 200 and h.plain(c["Config"]["Labels"].get("xagent.sandbox.name", "")).startswith("bench") \
                and c["Name"].endswith(".pool"):
            h.docker_remove_container(cid)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6, help="rounds (after one warm-up)")
    ap.add_argument("--refill", type=float, default=8.0, help="seconds the pools get to refill before a round")
    a = ap.parse_args()

    with member_sandbox(ROOT, "pools") as (stack, build, name):
        stack.stop_daemon()
        stack.set_daemon_command(["/usr/bin/env", "SBX_TEST_POOL_TICK_MS=500"] + stack.default_daemon_argv())
        h.write_config(stack, {"warm_pools": [
            pool("isolated", {"image": h.TEST_IMAGE, "network_isolated": True}),
            pool("bridge", {"image": h.TEST_IMAGE})]})
        try:
            h.Sandboxd(stack).call(MEMBER, "GetPolicy")        # activated: the pools fill
            time.sleep(a.refill)
            r = run_as_member(stack, MEMBER, DRIVER, [str(a.rounds), str(a.refill)])
        finally:
            stack.stop_daemon()
            stack.set_daemon_command(stack.default_daemon_argv())
            os.unlink(stack.config_path)
            remove_members()
        print(f"{'p50 ms':44} {'claim':>8} {'exec':>8}  ratio  target   (warm n, cold)")
        for kind in ("isolated", "bridge"):
            c, e = r[f"claim_{kind}"], r[f"exec_{kind}"]
            ratio = c / e if c and e else float("nan")
            print(f"{'ClaimSandbox+ExecSandbox vs ExecSandbox, ' + kind:44} {c or 0:8.1f} {e:8.1f}  {ratio:.2f}x  "
                  f"<= 1.3x ({'met' if ratio <= 1.3 else 'not met'})   ({r['n'][f'claim_{kind}']}, "
                  f"{r['cold'][kind]})")


if __name__ == "__main__":
    main()
