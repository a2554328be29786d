# SPDX-License-Identifier: LGPL-2.1-or-later
"""SIGKILL of the daemon during a ClaimSandbox (docs/lifecycle.md, "Warm pools and
ClaimSandbox"): a claim cut anywhere leaves a member or a sandbox, never both, never
neither. The relay holds the claim's request — its inspect of the member (before the
intent), its rename (before it is forwarded: before the rename; once Docker answered:
after the rename, before the row) —, the daemon is killed, the next call re-activates it,
and the member's container is checked: one container, no intent left, and either still
a member (its pool name, no row) or the claimed sandbox (its final name, its row). The
claim then made again is warm and its sandbox usable."""

import re
import time

import pytest

import fault as F
from fault import MEMBER

ID = r"[0-9a-f]{64}"
POINTS = {
    "inspect-before": ("GET", rf"^/containers/{ID}/json", "before", False),
    "rename-before": ("POST", rf"^/containers/{ID}/rename", "before", False),
    "rename-after": ("POST", rf"^/containers/{ID}/rename", "after", True),
}


def members(f):
    """{id: (container name, name label, running)} of the members."""
    return {i: c for i, c in f.containers().items() if c[0].endswith(".pool")}


def claim(f, prefix):
    return f.submit(MEMBER, "ClaimSandbox", "a{sv}a{sv}", [f.spec(), {"name_prefix": ["s", prefix]}])


@pytest.mark.parametrize("point", list(POINTS))
def test_sigkill_during_claim(f, point):
    method, path_re, when, claimed = POINTS[point]
    prefix = F.unique("claim")[:32].rstrip("-.")
    f.write_config(warm_pools=[{"user": MEMBER, "spec": {"image": F.TEST_IMAGE, "network_isolated": True},
                                "options": {"name_prefix": prefix}, "size": 1}])
    try:
        f.activate()
        F.wait_until(lambda: len([m for m in members(f).values() if m[2]]) == 1, 60, what="a running member")
        [(cid, (cname, label, _))] = members(f).items()
        hold = f.relay.hold(method, path_re, when=when, subject="^" + re.escape(cname) + "$")
        call = claim(f, prefix)
        hold.wait_held(F.DOCKER_TIMEOUT - 1)
        f.kill_daemon()
        call.result().error(*F.DAEMON_GONE)
        f.relay.release_all()
        f.activate()

        # Settled: no intent; the container is a member or the sandbox, not both, not neither.
        F.wait_until(lambda: f.intents() == [], 30, what="the claim's intent settled")
        mine = {i: c for i, c in f.containers().items() if c[1] == label}
        assert list(mine) == [cid], mine
        final = cname[:-len(".pool")]
        rows = f.rows()
        if claimed:
            assert mine[cid][0] == final and rows[label][0] == cid, (mine, rows)
        else:
            assert mine[cid][0] == cname and label not in rows, (mine, rows)

        # Claimed again: warm (the member kept, or the one the refill made).
        F.wait_until(lambda: len([m for m in members(f).values() if m[2]]) == 1, 60, what="a member again")
        r = claim(f, prefix).result()
        assert r.ok and r.result[3] == "warm", dict(r)
        if not claimed:
            assert r.result[1] == F.h.plain(label)
        name = r.result[1]
        out = f.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["echo", "hi"], {}]).result
        assert out[0] == 0 and bytes(out[1]) == b"hi\n"
        for n in {name, F.h.plain(label)}:
            assert f.delete(MEMBER, n).result().ok
    finally:
        f.write_config()
        time.sleep(0)
