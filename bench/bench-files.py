#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The file API against what it replaces (issue 22), side by side in one run:
ReadFile of 1 KiB vs a captured ExecSandbox `cat` of the same file (target p50 <=
0.25x), WriteFile of 1 MiB vs CopyToSandbox of it (a tar of the one file from a
regular file; <= 1.2x), ListFiles of a 1,000-entry directory vs ExecSandbox
`ls -la` of it (<= 0.5x). All on one persistent Gio connection in one process as
the unprivileged member sbx-member, sides interleaved per round (order rotating)
after a warm-up round. Prints medians; asserts nothing (a benchmark, not a test).

Needs root, a Docker daemon and the test image (tests/setup-docker.sh); starts the
private bus + polkitd stack of tests/e2e/stack.py."""

import argparse
import os
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER  # noqa: E402
from member_bench import member_sandbox, run_as_member  # noqa: E402

DRIVER = textwrap.dedent("""
    import io, json, os, sys, tarfile, tempfile
    from gi.repository import Gio, GLib
    from member_bench import interleaved_medians

    name, rounds, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    addr = Gio.dbus_address_get_for_bus_sync(Gio.BusType.SYSTEM, None)
    conn = Gio.DBusConnection.new_for_address_sync(
        addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)

    TYPES = {"ssaya{sv}": ["s", "ay", "a{sv}"], "ssa{sv}": ["s", "a{sv}"], "sasa{sv}": ["as", "a{sv}"],
             "ssha{sv}": ["s", "h", "a{sv}"]}

    def call(method, sig, args, fds=None):
        # One tuple of ready children: PyGObject would copy a large ay child byte by byte.
        kids = [GLib.Variant("s", name)] + [a if isinstance(a, GLib.Variant) else GLib.Variant(t, a)
                                            for t, a in zip(TYPES[sig], args)]
        params = GLib.Variant.new_tuple(*kids)
        if fds is None:
            return conn.call_sync("org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.xagent.Sandbox1.Manager",
                                  method, params, None, Gio.DBusCallFlags.NONE, 90000, None)
        fdlist = Gio.UnixFDList.new()
        for fd in fds:
            fdlist.append(fd)
        r, out = conn.call_with_unix_fd_list_sync("org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                                  "org.xagent.Sandbox1.Manager", method, params, None,
                                                  Gio.DBusCallFlags.NONE, 90000, fdlist, None)
        for fd in fdlist.steal_fds():
            os.close(fd)
        return r

    def ay(data):
        return GLib.Variant.new_from_bytes(GLib.VariantType("ay"), GLib.Bytes.new(data), True)

    def exec_(argv):
        r = call("ExecSandbox", "sasa{sv}", [argv, {}])
        assert r.get_child_value(0).get_int32() == 0
        return r

    one_k, one_m = os.urandom(1024), os.urandom(1 << 20)
    call("WriteFile", "ssaya{sv}", ["/tmp/bench/k.bin", ay(one_k), {"make_parents": GLib.Variant("b", True)}])
    exec_(["sh", "-c", "mkdir -p /tmp/bench/list && cd /tmp/bench/list && seq 1 1000 | xargs touch"])
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        info = tarfile.TarInfo("m.bin")
        info.size = len(one_m)
        t.addfile(info, io.BytesIO(one_m))
    tar = tempfile.TemporaryFile()
    tar.write(buf.getvalue())

    def read_file():
        r = call("ReadFile", "ssa{sv}", ["/tmp/bench/k.bin", {}])
        assert r.get_child_value(0).get_size() == 1024

    def exec_cat():
        r = exec_(["cat", "/tmp/bench/k.bin"])
        assert r.get_child_value(1).get_size() == 1024

    def write_file():
        call("WriteFile", "ssaya{sv}", ["/tmp/bench/w.bin", ay(one_m), {}])

    def copy_to():
        tar.seek(0)
        call("CopyToSandbox", "ssha{sv}", ["/tmp/bench", 0, {}], fds=[tar.fileno()])

    def list_files():
        r = call("ListFiles", "ssa{sv}", ["/tmp/bench/list", {"limit": GLib.Variant("u", 1000)}])
        assert r.get_child_value(0).n_children() == 1000

    def exec_ls():
        exec_(["ls", "-la", "/tmp/bench/list"])

    sides = {"read_file": read_file, "exec_cat": exec_cat, "write_file": write_file, "copy_to": copy_to,
             "list_files": list_files, "exec_ls": exec_ls}
    print(json.dumps(interleaved_medians(sides, rounds, calls)))
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (after one warm-up)")
    ap.add_argument("--calls", type=int, default=10, help="calls per round and side")
    a = ap.parse_args()

    with member_sandbox(ROOT, "files") as (stack, build, name):
        p50 = run_as_member(stack, MEMBER, DRIVER, [name, str(a.rounds), str(a.calls)])
        print(f"{'p50 ms':34} {'file API':>9} {'baseline':>9}  ratio  target")
        for label, ours, theirs, target in (("ReadFile 1 KiB vs ExecSandbox cat", "read_file", "exec_cat", 0.25),
                                            ("WriteFile 1 MiB vs CopyToSandbox", "write_file", "copy_to", 1.2),
                                            ("ListFiles 1,000 vs ExecSandbox ls -la", "list_files", "exec_ls",
                                             0.5)):
            ratio = p50[ours] / p50[theirs]
            print(f"{label:34} {p50[ours]:9.2f} {p50[theirs]:9.2f}  {ratio:.2f}x  <= {target}x "
                  f"({'met' if ratio <= target else 'not met'})")


if __name__ == "__main__":
    main()
