# SPDX-License-Identifier: LGPL-2.1-or-later
"""Warm pools and ClaimSandbox (issue 37, docs/lifecycle.md "Warm pools"), as the member
with a host policy that pools for her: GetPolicy shows her pool; members are made
started, under their pool name, never listed and never counted in
max_sandboxes_per_user; a claim of the pool's spec is "warm" (the member renamed,
recorded with the claim's labels and lifetimes, usable at once) and the pool is
refilled; another spec is "cold" (an ordinary create under a generated name); the
outsider is refused by polkit; a moved tag replaces the members. Docker is asked
directly what the pool holds."""

import subprocess
import time
import urllib.parse

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_exec import run as exec_

TICK = ["/usr/bin/env", "SBX_TEST_POOL_TICK_MS=500"]


def pool_prefix(tag):
    return h.unique(tag)[:32].rstrip("-.")


def members(prefix, owner=MEMBER):
    """This run's members of prefix on the shared dockerd: (id, image id, state) each."""
    label = urllib.parse.quote('{"label": ["xagent.sandbox.owner=%d"]}' % h.uid_of(owner))
    status, containers = h.docker("GET", f"/containers/json?all=1&filters={label}")
    assert status == 200
    return [(c["Id"], c["ImageID"], c["State"]) for c in containers
            if any(n.endswith(".pool") for n in c["Names"])
            and h.plain(c["Labels"].get("xagent.sandbox.name", "")).startswith(prefix + "-")]


def wait_members(prefix, n, deadline_s=120, image_id=None):
    end = time.time() + deadline_s
    while True:
        found = [m for m in members(prefix) if m[2] == "running" and (image_id is None or m[1] == image_id)]
        if len(found) == n and len(members(prefix)) == n:
            return found
        assert time.time() < end, f"the pool {prefix} holds {members(prefix)}, not {n} running members"
        time.sleep(0.3)


def remove_members(prefix):
    for cid, _, _ in members(prefix):
        h.docker_remove_container(cid)


def policy(prefix, image=h.TEST_IMAGE, size=2, **extra):
    return dict({"warm_pools": [{"user": MEMBER, "spec": {"image": image, "network_isolated": True},
                                 "options": {"name_prefix": prefix}, "size": size}]}, **extra)


def claim(sandboxd, user, sp, options):
    return sandboxd.call(user, "ClaimSandbox", "a{sv}a{sv}", [sp, options])


@pytest.fixture
def pooled(stack):
    """The daemon with a short refill tick; the pools' members removed afterwards."""
    prefixes = []
    with h.daemon_argv(stack, TICK + stack.default_daemon_argv()):
        yield prefixes
    for p in prefixes:
        remove_members(p)


def test_claim_warm_cold_refill_not_listed_not_counted(stack, sandboxd, cleanup, pooled):
    prefix = pool_prefix("pool")
    pooled.append(prefix)
    mark = h.LogMark(stack)
    with h.daemon_config(stack, policy(prefix, max_sandboxes_per_user=1)):
        got = sandboxd.call(MEMBER, "GetPolicy").result[0]
        assert got["max_pooled"] == 16
        [shown] = got["warm_pools"]
        assert (shown["user"], shown["name_prefix"], shown["size"]) == (MEMBER, prefix, 2)
        assert '"network_isolated": true' in shown["spec"].replace(":true", ": true")
        # The outsider sees no pool of hers.
        assert sandboxd.call(OTHER, "GetPolicy").result[0]["warm_pools"] == []
        ids = {m[0] for m in wait_members(prefix, 2)}

        # Never listed, never counted: with max_sandboxes_per_user 1 and two members, a claim passes.
        assert not any(n.startswith(prefix) for n in sandboxd.list(MEMBER))
        assert not any(prefix in n for n in sandboxd.list("root"))
        sp = h.spec(network_isolated=True)
        r = claim(sandboxd, MEMBER, sp, {"name_prefix": ["s", prefix], "labels": ["a{ss}", {"team": "a"}],
                                          "idle_timeout": ["u", 600]}).result
        path, name, fingerprint, outcome = r
        cleanup.sandbox(name)
        assert outcome == "warm"
        assert name.startswith(prefix + "-") and path == h.object_path(name, MEMBER)
        assert fingerprint == h.ctl_fingerprint(stack, h.spec_json(network_isolated=True))
        ins = sandboxd.inspect(MEMBER, name).result[0]
        assert ins["container_id"] in ids and ins["state"] == "running"
        # The claim's labels are the service's (Docker cannot change a container's).
        assert ins["sandbox_labels"] == {"team": "a"} and ins["idle_timeout"] == 600
        status, c = h.docker("GET", f"/containers/{ins['container_id']}/json")
        assert c["Name"] == "/" + h.container_name(name, MEMBER)
        assert exec_(sandboxd, MEMBER, name, ["sh", "-c", "echo hi; id -u"])[:2] == (0, f"hi\n{h.uid_of(MEMBER)}\n")
        assert [n for n in sandboxd.list(MEMBER) if n.startswith(prefix)] == [name]

        # Refilled: two members again, the claimed one not among them.
        again = {m[0] for m in wait_members(prefix, 2)}
        assert ins["container_id"] not in again

        # The claim counts: the member's limit is reached, although members remain.
        msg = claim(sandboxd, MEMBER, sp, {"name_prefix": ["s", prefix]}).error(h.POLICY_VIOLATION)
        assert "max_sandboxes_per_user" in msg
        assert sandboxd.delete(MEMBER, name).ok

        # Another spec: cold, an ordinary create under a generated name.
        r = claim(sandboxd, MEMBER, h.spec(network_isolated=True, env={"A": "1"}),
                  {"name_prefix": ["s", prefix]}).result
        cleanup.sandbox(r[1])
        assert r[3] == "cold" and r[1].startswith(prefix + "-")
        assert sandboxd.inspect(MEMBER, r[1]).result[0]["container_id"] not in again
        assert sandboxd.delete(MEMBER, r[1]).ok

        # The outsider: polkit's create, which she has not.
        claim(sandboxd, OTHER, sp, {"name_prefix": ["s", prefix]}).error(h.INTERACTIVE, h.ACCESS_DENIED)
        # Bad input, typed and naming what was wrong.
        msg = claim(sandboxd, MEMBER, sp, {"name_prefix": ["s", "~x"]}).error(h.INVALID_ARGS)
        assert "name_prefix" in msg
    log = mark.new()
    assert 'verb=claim' in log and 'reason="warm"' in log and 'reason="cold"' in log


def test_policy_refuses_pooled_volumes(stack, sandboxd):
    with h.daemon_config(stack, {"warm_pools": [{"user": MEMBER, "spec": {"volumes": [["/tmp", "/w", "ro"]]},
                                                 "size": 1}]}):
        r = subprocess.run([stack.daemon_binary, "--check-config", "--config", stack.config_path],
                           capture_output=True, text=True)
        assert r.returncode != 0 and "warm_pools[0].spec: a warm pool's spec has no volumes" in r.stdout + r.stderr


def test_moved_tag_replaces_members(stack, sandboxd, cleanup, pooled):
    prefix = pool_prefix("tag")
    pooled.append(prefix)
    tag = f"xagent-sandbox-pooltest:{prefix}"
    status, base = h.docker("GET", f"/images/{h.TEST_IMAGE}/json")
    repo, version = tag.split(":")
    assert h.docker("POST", f"/images/{h.TEST_IMAGE}/tag?repo={repo}&tag={version}")[0] == 201
    other = None
    try:
        with h.daemon_config(stack, policy(prefix, image=tag, size=1)):
            assert sandboxd.call(MEMBER, "GetPolicy").ok          # activated: the pools are filled
            wait_members(prefix, 1, image_id=base["Id"])
            # Another image under the tag: a container of the test image committed with a label.
            status, made = h.docker("POST", f"/containers/create?name={prefix}-src",
                                    {"Image": h.TEST_IMAGE, "Cmd": ["true"]})
            cleanup.container(made["Id"])
            status, committed = h.docker("POST", f"/commit?container={made['Id']}&repo={repo}&tag={version}",
                                         {"Labels": {"moved": prefix}})
            assert status == 201
            other = committed["Id"]
            assert other != base["Id"]
            # Replaced in the background: the member is of the image the tag names now.
            wait_members(prefix, 1, image_id=other)
    finally:
        h.docker("DELETE", f"/images/{urllib.parse.quote(tag, safe='')}?force=1")
        if other:
            h.docker("DELETE", f"/images/{other}?force=1")
