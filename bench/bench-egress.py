#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What egress costs (issue 35: at most 1.15x): CreateSandbox of a bridge sandbox with its
egress rules loaded (option egress allowlist, one entry) against the same create without
rules (the policy's egress.default "open", no option), and a StopSandbox + StartSandbox of
each (a start loads the rules again). One persistent Gio connection in one process as the
unprivileged member sbx-member, the sides interleaved per round (order rotating) after a
warm-up round; every create is deleted at once (not timed). Prints medians and ratios;
asserts nothing (a benchmark, not a test).

Needs root, a Docker daemon and the test image (tests/setup-docker.sh); starts the private
bus + polkitd stack of tests/e2e/stack.py."""

import argparse
import os
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER  # noqa: E402
from member_bench import member_sandbox, run_as_member  # noqa: E402
import sandbox_helpers as h  # noqa: E402

DRIVER = textwrap.dedent("""
    import json, os, sys
    from gi.repository import Gio, GLib
    from member_bench import interleaved_medians

    rounds, calls = int(sys.argv[1]), int(sys.argv[2])
    addr = Gio.dbus_address_get_for_bus_sync(Gio.BusType.SYSTEM, None)
    conn = Gio.DBusConnection.new_for_address_sync(
        addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    SPEC = {"image": GLib.Variant("s", "xagent-sandbox-test:latest")}
    RULES = {"egress": GLib.Variant("a{sv}", {"mode": GLib.Variant("s", "allowlist"),
                                               "allow": GLib.Variant("as", ["203.0.113.0/24:443/tcp"])})}

    def call(method, sig, args):
        return conn.call_sync("org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.xagent.Sandbox1.Manager",
                              method, GLib.Variant(sig, args), None, Gio.DBusCallFlags.NONE, 120000, None)

    n = [0]
    def name():
        n[0] += 1
        return "bench-egress-%d-%d" % (os.getpid(), n[0])

    made = []
    def create(options):
        def f():
            nm = name()
            call("CreateSandbox", "(sa{sv}a{sv})", (nm, SPEC, options))
            made.append(nm)
        return f

    def restart(nm):
        def f():
            call("StopSandbox", "(sa{sv})", (nm, {"timeout": GLib.Variant("u", 0)}))
            call("StartSandbox", "(s)", (nm,))
        return f

    # The created ones are kept to the end (deleted then, not timed): at most
    # (rounds + 1) * calls of each side, under max_sandboxes_per_user with the defaults.
    def deleting(f):
        def g():
            f()
            g.pending.append(made.pop())
        g.pending = []
        return g

    with_rules, without = deleting(create(RULES)), deleting(create({}))
    a, b = name(), name()
    call("CreateSandbox", "(sa{sv}a{sv})", (a, SPEC, RULES))
    call("CreateSandbox", "(sa{sv}a{sv})", (b, SPEC, {}))
    try:
        sides = {"create_rules": with_rules, "create_open": without,
                 "start_rules": restart(a), "start_open": restart(b)}
        out = interleaved_medians({k: f for k, f in sides.items()}, rounds, calls)
    finally:
        for g in (with_rules, without):
            for nm in g.pending:
                call("DeleteSandbox", "(s)", (nm,))
        for nm in (a, b):
            call("DeleteSandbox", "(s)", (nm,))
    print(json.dumps(out))
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6, help="interleaved rounds (after one warm-up)")
    ap.add_argument("--calls", type=int, default=2, help="calls per round and side")
    a = ap.parse_args()

    with member_sandbox(ROOT, "egress") as (stack, build, name):
        stack.stop_daemon()
        h.write_config(stack, {"egress": {"default": "open"}, "max_sandboxes_per_user": 64})
        try:
            p50 = run_as_member(stack, MEMBER, DRIVER, [str(a.rounds), str(a.calls)])
        finally:
            stack.stop_daemon()
            os.unlink(stack.config_path)
        print(f"{'p50 ms':28} {'rules':>9} {'no rules':>9}  ratio  target")
        for label, ours, theirs in (("CreateSandbox (bridge)", "create_rules", "create_open"),
                                    ("StopSandbox + StartSandbox", "start_rules", "start_open")):
            ratio = p50[ours] / p50[theirs]
            print(f"{label:28} {p50[ours]:9.1f} {p50[theirs]:9.1f}  {ratio:.2f}x  <= 1.15x "
                  f"({'met' if ratio <= 1.15 else 'not met'})")


if __name__ == "__main__":
    main()
