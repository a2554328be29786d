# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lifetimes changed after creation (issue 39, docs/lifecycle.md): SetSandboxLifetimes
and the object's SetLifetimes as the member (properties and inspection follow,
PropertiesChanged, audited; expire_after counted from now; a key not given kept), the
policy's bounds and bad keys typed, the outsider refused (manage-others); an
EnsureSandbox with lifetimes applying them to the sandbox it finds; and what counts as
activity: a detached process nobody reads does not hold off the idle stop unless
idle_counts_processes. Docker is asked directly whether a stop happened."""

import time

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_lifetimes_deadlines import create, docker_state, wait_docker
from test_lifetimes_leases import props

DETACH = {"detach": ["b", True]}


def set_lifetimes(sandboxd, user, name, options, owner=None):
    if owner is None:
        return sandboxd.call(user, "SetSandboxLifetimes", "sa{sv}", [name, options])
    return sandboxd.call(user, "SetLifetimes", "a{sv}", [options], path=h.object_path(name, owner),
                         iface=h.SANDBOX)


def detach(sandboxd, name, argv):
    return sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                         [name, argv, DETACH, "</dev/null", ">/dev/null", ">/dev/null"]).result[0]


def test_set_sandbox_lifetimes(stack, sandboxd, cleanup):
    mark = h.LogMark(stack)
    listener = h.Listener(stack, MEMBER)
    try:
        name = create(sandboxd, cleanup, "set", idle_timeout=600)
        before = time.time()
        assert set_lifetimes(sandboxd, MEMBER, name, {"expire_after": ["u", 900], "on_idle": ["s", "pause"]}).ok
        p = props(sandboxd, name)
        # The idle timeout not given stays; the expiry counts from now, not from the create.
        assert (p["IdleTimeout"], p["OnIdle"]) == (600, "pause")
        assert before * 1e6 + 900e6 - 2e6 <= p["ExpiresAt"] <= time.time() * 1e6 + 900e6 + 2e6
        assert p["ExpiresAt"] > p["CreatedAt"] + 900_000_000
        ins = sandboxd.inspect(MEMBER, name).result[0]
        assert (ins["idle_timeout"], ins["on_idle"], ins["expires_at"], ins["idle_counts_processes"]) == \
            (600, "pause", p["ExpiresAt"], False)
        listener.wait_for(lambda sigs: any(s["member"] == "PropertiesChanged" and "ExpiresAt" in s["args"][1]
                                           for s in sigs))
        # The object's method; 0 is never.
        assert set_lifetimes(sandboxd, MEMBER, name, {"expire_after": ["u", 0], "idle_counts_processes": ["b", True]},
                             owner=MEMBER).ok
        assert props(sandboxd, name)["ExpiresAt"] == 0
        assert sandboxd.inspect(MEMBER, name).result[0]["idle_counts_processes"] is True
        # Shortened: acted on with nobody calling.
        assert set_lifetimes(sandboxd, MEMBER, name, {"idle_timeout": ["u", 2], "on_idle": ["s", "stop"]}).ok
        wait_docker(name, "stopped", 30)
    finally:
        listener.close()
    log = mark.new()
    assert "verb=set-lifetimes" in log and f'sandbox="{name}"' in log


def test_set_lifetimes_bad_input_and_the_outsider(stack, sandboxd, cleanup):
    name = create(sandboxd, cleanup, "setbad", idle_timeout=600)
    with h.daemon_config(stack, {"max_idle_timeout": 10, "max_expire_after": 20}):
        msg = set_lifetimes(sandboxd, MEMBER, name, {"idle_timeout": ["u", 11]}).error(h.POLICY_VIOLATION)
        assert "idle_timeout: 11 s is above the host policy's max_idle_timeout (10 s)" in msg
        msg = set_lifetimes(sandboxd, MEMBER, name, {"expire_after": ["u", 21]}).error(h.POLICY_VIOLATION)
        assert "max_expire_after (20 s)" in msg
    assert "ttl: unknown option" in set_lifetimes(sandboxd, MEMBER, name, {"ttl": ["u", 1]}).error(h.INVALID_ARGS)
    assert "on_idle: 'nap'" in set_lifetimes(sandboxd, MEMBER, name, {"on_idle": ["s", "nap"]}).error(h.INVALID_ARGS)
    msg = set_lifetimes(sandboxd, MEMBER, name, {"idle_counts_processes": ["u", 1]}).error(h.INVALID_ARGS)
    assert "idle_counts_processes: expected a value of type 'b'" in msg
    set_lifetimes(sandboxd, MEMBER, h.unique("nosuch"), {"idle_timeout": ["u", 5]}).error(h.NO_SUCH_SANDBOX)
    # Nothing of the refused calls was applied.
    assert props(sandboxd, name)["IdleTimeout"] == 600
    # Another user's sandbox: manage-others, which the outsider has not.
    set_lifetimes(sandboxd, OTHER, name, {"idle_timeout": ["u", 5]}, owner=MEMBER).error(
        h.INTERACTIVE, h.ACCESS_DENIED)
    set_lifetimes(sandboxd, OTHER, name, {"idle_timeout": ["u", 5]}).error(h.INTERACTIVE, h.NO_SUCH_SANDBOX)
    assert props(sandboxd, name)["IdleTimeout"] == 600


def test_an_ensure_applies_lifetimes_to_the_sandbox_it_finds(stack, sandboxd, cleanup):
    name = h.unique("ensure-set")
    cleanup.sandbox(name)
    r = sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, h.spec(), {"idle_timeout": ["u", 600]}])
    assert r.result[2] == "created"
    assert props(sandboxd, name)["IdleTimeout"] == 600
    # Without lifetimes: nothing changes.
    assert sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, h.spec(), {}]).result[2] == "reused"
    assert props(sandboxd, name)["IdleTimeout"] == 600
    r = sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, h.spec(), {"idle_timeout": ["u", 2],
                                                                               "expire_after": ["u", 300]}])
    assert r.result[2] == "reused"
    p = props(sandboxd, name)
    assert p["IdleTimeout"] == 2 and p["ExpiresAt"] >= (time.time() + 290) * 1e6
    wait_docker(name, "stopped", 30)
    # Started again by an ensure, with a lifetime given: applied too.
    r = sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, h.spec(), {"idle_timeout": ["u", 700]}])
    assert r.result[2] == "started"
    assert props(sandboxd, name)["IdleTimeout"] == 700


def test_a_detached_process_nobody_reads_does_not_hold_off_the_idle_stop(stack, sandboxd, cleanup):
    name = create(sandboxd, cleanup, "idleproc", idle_timeout=3)
    detach(sandboxd, name, ["sleep", "1000"])
    t0 = time.monotonic()
    wait_docker(name, "stopped", 40)
    assert time.monotonic() - t0 < 40


def test_idle_counts_processes_keeps_it_while_a_process_runs(stack, sandboxd, cleanup):
    name = h.unique("idlecount")
    sandboxd.create_ok(MEMBER, name, h.spec(), cleanup,
                       options={"idle_timeout": ["u", 3], "idle_counts_processes": ["b", True]})
    assert sandboxd.inspect(MEMBER, name).result[0]["idle_counts_processes"] is True
    detach(sandboxd, name, ["sleep", "1000"])
    time.sleep(14)              # idle timeout 3 s, deadlines looked at every 5 s
    assert docker_state(name) == "running"
    # Changed to the default: the unread process no longer holds it.
    assert set_lifetimes(sandboxd, MEMBER, name, {"idle_counts_processes": ["b", False]}).ok
    wait_docker(name, "stopped", 40)
