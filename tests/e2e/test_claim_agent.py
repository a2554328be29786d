# SPDX-License-Identifier: LGPL-2.1-or-later
"""Claiming a sandbox (ClaimSandbox, docs/api.md) through the agent clients, as the
member, with a host policy that keeps a warm pool for the member: the Python module's
`Sandbox.claim` and the MCP server's `sandbox_ensure` without `sandbox` (the official
1.x SDK client) — a warm claim from the pool, a cold one for another spec, the
generated name's prefix, labels and lifetimes applied to the claimed sandbox, and the
outsider refused with a typed error."""

import json
import time
from urllib.parse import quote

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_mcp import mcp  # noqa: F401 (the fixture)
from test_python_client import pyrun  # noqa: F401 (the fixture)

# The pool's spec (its own env) and its name prefix: a claim takes a member when its
# spec's fingerprint and its name_prefix are the pool's.
POOL_ENV = {"POOL": "claim-agent"}
POOL_SIZE = 1
PREFIX = h.unique("pool")
# A claimed sandbox's expire_after and idle_timeout (seconds), far from any default.
EXPIRE_AFTER = 7200
IDLE_TIMEOUT = 1800


def pool_members(stack, running=True):
    """The warm pool's members waiting now: containers this file's daemon made (its
    service label) for the member, labelled as a pool's, under their waiting container
    name (the sandbox's name with ".pool"; a claim renames it), running (or any)."""
    filters = json.dumps({"label": ["xagent.managed=true", "xagent.sandbox.pool",
                                    f"xagent.sandbox.owner={h.uid_of(MEMBER)}",
                                    f"xagent.sandbox.service={h.service_id(stack.state_dir)}"]})
    status, rows = h.docker("GET", "/containers/json?all=1&filters=" + quote(filters))
    assert status == 200, rows
    return [r["Id"] for r in rows
            if any(n.endswith(".pool") for n in r["Names"]) and (r["State"] == "running" or not running)]


def wait_pool_full(stack, timeout=180):
    """Until the pool holds POOL_SIZE started members (it is refilled in the
    background after a claim, and filled after the daemon starts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(pool_members(stack)) >= POOL_SIZE:
            return
        time.sleep(0.5)
    raise AssertionError(f"the warm pool did not fill within {timeout} s: {pool_members(stack)}")


@pytest.fixture(scope="module")
def pooled(stack, sandboxd):
    """The daemon on a policy keeping a warm pool of POOL_SIZE for the member; its
    members are gone afterwards (the daemon without the pool removes them)."""
    config = {"warm_pools": [{"user": MEMBER, "spec": {"image": h.TEST_IMAGE, "env": POOL_ENV},
                              "options": {"name_prefix": PREFIX}, "size": POOL_SIZE}]}
    with h.daemon_config(stack, config):
        sandboxd.call(MEMBER, "ListSandboxes").result        # activates it: the pool fills
        yield config
    sandboxd.call(MEMBER, "ListSandboxes").result            # one without the pool
    deadline = time.monotonic() + 60
    while pool_members(stack, running=False) and time.monotonic() < deadline:
        time.sleep(0.5)
    for cid in pool_members(stack, running=False):
        h.docker_remove_container(cid)


@pytest.fixture
def claimed(sandboxd):
    """Afterwards, every sandbox of the member's (or the outsider's) named with PREFIX
    is deleted."""
    yield PREFIX
    for user in (MEMBER, OTHER):
        for name in sandboxd.list(user):
            if name.startswith(PREFIX):
                sandboxd.delete(user, name)


def test_python_claim(stack, pyrun, pooled, claimed):  # noqa: F811
    wait_pool_full(stack)
    out = pyrun(MEMBER, f"""
        import time
        seen = {{"listed_before": [s.name for s in list_sandboxes() if s.name.startswith({claimed!r})]}}
        before = time.time()
        with Sandbox.claim(image={h.TEST_IMAGE!r}, env={POOL_ENV!r}, name_prefix={claimed!r},
                           labels={{"task": "t1"}}, idle_timeout={IDLE_TIMEOUT}, expire_after={EXPIRE_AFTER},
                           on_exit="delete") as sb:
            seen["warm"] = [sb.name, sb.outcome, sb.fingerprint]
            seen["run"] = sb.run("echo $POOL; id -u").stdout
            seen["labels"] = sb.labels
            seen["lifetimes"] = sb.lifetimes
            seen["from_claim"] = sb.lifetimes["expires_at"] >= (before + {EXPIRE_AFTER}) * 1e6 - 2e6
            seen["listed"] = sb.name in [s.name for s in list_sandboxes()]
            seen["found"] = [s.name for s in Sandbox.find(labels={{"task": "t1"}})]
        seen["deleted"] = sb.name not in [s.name for s in list_sandboxes()]
        cold = Sandbox.claim(image={h.TEST_IMAGE!r}, env={{"POOL": "none"}}, name_prefix={claimed!r},
                             egress={{"mode": "none"}})
        seen["cold"] = [cold.name, cold.outcome, cold.state, cold.run("echo $POOL").stdout]
        seen["egress"] = cold.inspect()["egress"]
        cold.delete()
        cold.close()
        try:
            Sandbox.claim(image={h.TEST_IMAGE!r}, name_prefix="not a prefix!")
        except InvalidArgs as e:
            seen["bad_prefix"] = e.message
        print(json.dumps(seen))
    """, timeout=300)
    name, outcome, fingerprint = out["warm"]
    assert outcome == "warm", out
    assert out["listed_before"] == [], "a pool's member is no sandbox until claimed"
    assert name.startswith(claimed + "-") and fingerprint
    assert out["run"] == f"claim-agent\n{h.uid_of(MEMBER)}\n"
    assert out["labels"] == {"task": "t1"}
    assert out["lifetimes"]["idle_timeout"] == IDLE_TIMEOUT and out["from_claim"], out["lifetimes"]
    assert out["listed"] and out["found"] == [name] and out["deleted"]
    cold_name, cold_outcome, state, run = out["cold"]
    assert cold_outcome == "cold" and cold_name.startswith(claimed + "-") and cold_name != name
    assert (state, run) == ("running", "none\n")
    assert out["egress"]["mode"] == "none", out["egress"]
    assert "name_prefix" in out["bad_prefix"], out["bad_prefix"]


def test_python_claim_outsider_refused(pyrun, pooled, claimed):  # noqa: F811
    out = pyrun(OTHER, f"""
        try:
            Sandbox.claim(image={h.TEST_IMAGE!r}, env={POOL_ENV!r}, name_prefix={claimed!r})
            print(json.dumps("claimed"))
        except SandboxError as e:
            print(json.dumps([type(e).__name__, e.name, isinstance(e, InteractiveAuthorizationRequired)]))
    """)
    assert out == ["InteractiveAuthorizationRequired",
                   "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", True]


def test_mcp_claim(stack, mcp, pooled, claimed):  # noqa: F811
    wait_pool_full(stack)
    out = mcp.node(MEMBER, f"""
        const t0 = Date.now();
        out.warm = await call("sandbox_ensure", {{ image: {h.TEST_IMAGE!r}, env: {POOL_ENV!r},
                                                  name_prefix: {claimed!r}, labels: {{ task: "m1" }},
                                                  idle_timeout: {IDLE_TIMEOUT}, expire_after: {EXPIRE_AFTER} }});
        out.run = await call("run", {{ sandbox: out.warm.sandbox, command: "echo $POOL" }});
        out.info = await call("sandbox_info", {{ sandbox: out.warm.sandbox }});
        out.t0 = t0 * 1000;
        out.cold = await call("sandbox_ensure", {{ image: {h.TEST_IMAGE!r}, name_prefix: {claimed!r} }});
        out.del = await call("sandbox", {{ action: "delete", sandbox: out.cold.sandbox }});
        out.noName = await call("sandbox_ensure", {{ image: {h.TEST_IMAGE!r}, on_mismatch: "recreate" }});
        out.prefixAndName = await call("sandbox_ensure", {{ sandbox: {claimed!r}, name_prefix: "x" }});
    """, timeout=300)
    warm = out["warm"]
    assert warm["outcome"] == "warm", warm
    assert warm["sandbox"].startswith(claimed + "-") and warm["fingerprint"], warm
    assert warm["sandbox"] in warm["_text"]
    assert out["run"]["stdout"] == "claim-agent\n"
    info = out["info"]
    assert info["sandbox_labels"] == {"task": "m1"}
    assert info["idle_timeout"] == IDLE_TIMEOUT and info["expires_at"] >= out["t0"] + EXPIRE_AFTER * 1e6 - 2e6
    cold = out["cold"]
    assert cold["outcome"] == "cold" and cold["sandbox"].startswith(claimed + "-") and cold["sandbox"] != warm["sandbox"]
    assert out["del"]["deleted"] is True
    for key in ("noName", "prefixAndName"):
        assert out[key]["error"]["name"] == "org.freedesktop.DBus.Error.InvalidArgs", out[key]
    assert "on_mismatch" in out["noName"]["error"]["message"]
    assert "name_prefix" in out["prefixAndName"]["error"]["message"]


def test_mcp_claim_outsider_refused(mcp, pooled, claimed):  # noqa: F811
    out = mcp.node(OTHER, f"""
        out.claim = await call("sandbox_ensure", {{ image: {h.TEST_IMAGE!r}, env: {POOL_ENV!r},
                                                   name_prefix: {claimed!r} }});
    """)
    assert out["claim"]["error"]["name"] == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", out
