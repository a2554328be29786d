#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What gVisor costs against runc (issue 41), in one run: CreateSandbox of a
network_isolated sandbox with option runtime "gvisor" against the same create without
(runc), ExecSandbox of `true` in a running sandbox of each, and each one's idle memory on
the host (the PSS of every process in its container's cgroup, a few seconds after its
start). A private dockerd in its own network namespace with runsc registered in its own
daemon.json (tests/e2e/test_gvisor.py's RunscDocker); the service pointed at it; one
persistent Gio connection in one process as the unprivileged member sbx-member, the sides
interleaved per round after a warm-up round; every create deleted at the end (not timed).
Prints medians and ratios; asserts nothing (a benchmark, not a test).

Needs root, the test image (tests/setup-docker.sh) and runsc (tools/install-deps.sh);
starts the private bus + polkitd stack of tests/e2e/stack.py."""

import argparse
import os
import shutil
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER, Stack  # noqa: E402
from member_bench import run_as_member  # noqa: E402
import sandbox_helpers as h  # noqa: E402
from test_gvisor import RunscDocker, policy  # noqa: E402

DRIVER = textwrap.dedent("""
    import json, os, sys
    from gi.repository import Gio, GLib
    from member_bench import interleaved_medians

    rounds, calls, idle_gvisor, idle_runc = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    addr = Gio.dbus_address_get_for_bus_sync(Gio.BusType.SYSTEM, None)
    conn = Gio.DBusConnection.new_for_address_sync(
        addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    SPEC = {"image": GLib.Variant("s", "xagent-sandbox-test:latest"), "network_isolated": GLib.Variant("b", True)}
    GVISOR = {"runtime": GLib.Variant("s", "gvisor")}

    def call(method, sig, args):
        return conn.call_sync("org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.xagent.Sandbox1.Manager",
                              method, GLib.Variant(sig, args), None, Gio.DBusCallFlags.NONE, 120000, None)

    n = [0]
    made = []
    def create(options):
        def f():
            n[0] += 1
            nm = "bench-gvisor-%d-%d" % (os.getpid(), n[0])
            call("CreateSandbox", "(sa{sv}a{sv})", (nm, SPEC, options))
            made.append(nm)
        return f

    def exec_in(nm):
        return lambda: call("ExecSandbox", "(sasa{sv})", (nm, ["true"], {}))

    try:
        out = interleaved_medians({"create_gvisor": create(GVISOR), "create_runc": create({}),
                                   "exec_gvisor": exec_in(idle_gvisor), "exec_runc": exec_in(idle_runc)},
                                  rounds, calls)
    finally:
        for nm in made:
            call("DeleteSandbox", "(s)", (nm,))
    print(json.dumps(out))
""")


def _pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0


def pss_kib(container):
    """(the PSS of the processes in the container's pids cgroup (cgroup v1 here), the
    same plus its containerd shim's), KiB."""
    with open(f"/sys/fs/cgroup/pids/docker/{container['Id']}/cgroup.procs") as f:
        inside = sum(_pss(int(x)) for x in f.read().split())
    with open(f"/proc/{container['State']['Pid']}/stat") as f:
        shim = int(f.read().rsplit(")", 1)[1].split()[1])
    return inside, inside + _pss(shim)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds (after one warm-up)")
    ap.add_argument("--calls", type=int, default=2, help="calls per round and side")
    ap.add_argument("--idle", type=float, default=5, help="seconds the idle sandboxes settle before their PSS")
    a = ap.parse_args()

    build = os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build"))
    stack = Stack(ROOT, build).start()
    tmp = tempfile.mkdtemp(prefix="sbx-bench-gvisor-")
    os.chmod(tmp, 0o711)
    docker = RunscDocker(os.path.join(tmp, "docker"))
    bus = h.Sandboxd(stack)
    idle = {"gvisor": f"bench-gv-idle-{os.getpid()}", "runc": f"bench-rc-idle-{os.getpid()}"}
    try:
        docker.write_runtimes()
        docker.start()
        stack.stop_daemon()
        h.write_config(stack, policy(docker, max_sandboxes_per_user=64))
        spec = h.spec(network_isolated=True)
        bus.create(MEMBER, idle["gvisor"], spec, {"runtime": ["s", "gvisor"]}).result
        bus.create(MEMBER, idle["runc"], spec).result
        time.sleep(a.idle)
        pss = {k: pss_kib(docker.inspect(h.container_name(v, MEMBER))) for k, v in idle.items()}
        p50 = run_as_member(stack, MEMBER, DRIVER, [str(a.rounds), str(a.calls), idle["gvisor"], idle["runc"]])
    finally:
        for v in idle.values():
            bus.delete(MEMBER, v)
        stack.stop_daemon()
        if os.path.exists(stack.config_path):
            os.unlink(stack.config_path)
        docker.teardown()
        shutil.rmtree(tmp, ignore_errors=True)
        stack.stop()
    print(f"{'median':32} {'gvisor':>10} {'runc':>10}  ratio")
    for label, g, r in (("CreateSandbox (isolated), ms", p50["create_gvisor"], p50["create_runc"]),
                        ("ExecSandbox true, ms", p50["exec_gvisor"], p50["exec_runc"]),
                        ("idle memory (PSS), KiB", pss["gvisor"][0], pss["runc"][0]),
                        ("… with the containerd shim, KiB", pss["gvisor"][1], pss["runc"][1])):
        print(f"{label:32} {g:10.1f} {r:10.1f}  {g / r:.2f}x")


if __name__ == "__main__":
    main()
