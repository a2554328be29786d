# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ObjectManager (GetManagedObjects) and introspection while an exec runs: the
sandbox objects and the exec objects (/org/xagent/Sandbox1/exec/ID) a caller may
read — its own, the execs it started or that run in its sandboxes; root: all. Another
user's call is answered (it used to fail AccessDenied as a whole, since it tried to
read an exec object it may not) and shows none of them."""

import json
import os
import time

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

OM = "org.freedesktop.DBus.ObjectManager"


def managed_objects(stack, user):
    r = stack.busctl(user, "--json=short", "call", h.BUS_NAME, "/org/xagent/Sandbox1", OM, "GetManagedObjects")
    assert r.returncode == 0, (user, r.stderr)
    return {path: sorted(ifaces) for path, ifaces in json.loads(r.stdout)["data"][0].items()}


def tree(stack, user):
    r = stack.busctl(user, "tree", "--list", h.BUS_NAME)
    assert r.returncode == 0, (user, r.stderr)
    return r.stdout.split()


def test_exec_objects_only_for_whom_may_read_them(stack, sandboxd, cleanup):
    name = cleanup.sandbox(h.unique("om"))
    sandboxd.create(MEMBER, name, h.spec()).result
    path = h.object_path(name, MEMBER)
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    p = stack.spawn_as(MEMBER, [ctl, "--no-ask-password", "exec", name, "--", "sleep", "20"])
    try:
        execs = []
        deadline = time.monotonic() + 20
        while not execs and time.monotonic() < deadline:
            mine = managed_objects(stack, MEMBER)
            execs = [o for o in mine if o.startswith("/org/xagent/Sandbox1/exec/")]
            time.sleep(0.1)
        assert len(execs) == 1, mine
        assert "org.xagent.Sandbox1.Exec" in mine[execs[0]]
        assert "org.xagent.Sandbox1.Sandbox" in mine[path]
        assert execs[0] in tree(stack, MEMBER)

        # Another user: answered, with neither of the member's objects.
        theirs = managed_objects(stack, OTHER)
        assert path not in theirs and execs[0] not in theirs, theirs
        assert execs[0] not in tree(stack, OTHER)
        # Its path still answers as before: properties are refused, not hidden.
        r = stack.busctl(OTHER, "get-property", h.BUS_NAME, execs[0], "org.xagent.Sandbox1.Exec", "Running")
        assert r.returncode != 0 and "Access denied" in r.stderr, r

        # root sees everything.
        r = stack.run_as("root", ["busctl", "--system", "--json=short", "call", h.BUS_NAME, "/org/xagent/Sandbox1",
                                  OM, "GetManagedObjects"])
        everything = json.loads(r.stdout)["data"][0]
        assert path in everything and execs[0] in everything
    finally:
        p.kill()
        p.wait(timeout=30)
