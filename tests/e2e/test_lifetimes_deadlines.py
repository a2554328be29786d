# SPDX-License-Identifier: LGPL-2.1-or-later
"""Idle stop and expiry (issue 23, docs/lifecycle.md) through the real bus as the member and
the outsider, with short timeouts: an idle sandbox is stopped (or paused, on_idle
pause) with no client calling, a held lease or a running exec postpones it, expiry
deletes (SandboxRemoved, audited), a deadline that fell due while no daemon ran is
acted on at the next start-up (after a SIGKILL), the policy's bounds and default, and
the daemon staying up while a deadline is to come. Docker is asked directly whether it
happened. The daemon runs with a short deadline tick (SBX_TEST_DEADLINE_TICK_MS), so the
test waits for the timeouts, not for the tick."""

import time

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_lifetimes_leases import holder, props

import signal

import pytest

# The deadline tick for tests (xagent-sandboxd(8), ENVIRONMENT): a quarter of a second
# instead of 5 s, so that the waits below are the timeouts' own and not the tick's.
TICK = ["/usr/bin/env", "SBX_TEST_DEADLINE_TICK_MS=250"]


@pytest.fixture(scope="module", autouse=True)
def short_tick(stack):
    with h.daemon_argv(stack, TICK + stack.default_daemon_argv()):
        yield


def create(sandboxd, cleanup, tag, **options):
    name = h.unique(tag)
    opts = {k: (["s", v] if isinstance(v, str) else ["u", v]) for k, v in options.items()}
    sandboxd.create_ok(MEMBER, name, h.spec(), cleanup, options=opts)
    return name


def docker_state(name):
    """The container's state as Docker has it, or None when it is gone."""
    ids = h.docker_containers_labelled(name)
    if not ids:
        return None
    status, data = h.docker("GET", f"/containers/{ids[0]}/json")
    if status == 404:                   # removed since the list
        return None
    assert status == 200, data
    state = data["State"]
    return "paused" if state["Paused"] else "running" if state["Running"] else "stopped"


def wait_docker(name, want, timeout):
    h.wait_until(lambda: docker_state(name) == want, timeout, step=0.5, what=f"{name} {want}")


def test_an_idle_sandbox_is_stopped_with_nobody_calling(stack, sandboxd, cleanup):
    mark = h.LogMark(stack)
    t0 = time.monotonic()                   # idle from its creation on
    name = create(sandboxd, cleanup, "idle", idle_timeout=2)
    p = props(sandboxd, name)
    assert (p["IdleTimeout"], p["OnIdle"], p["ExpiresAt"]) == (2, "stop", 0)
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert (ins["idle_timeout"], ins["on_idle"], ins["expires_at"], ins["leases"]) == (2, "stop", 0, 0)
    assert ins["last_activity"] >= p["CreatedAt"]
    wait_docker(name, "stopped", 30)
    assert time.monotonic() - t0 >= 2
    assert props(sandboxd, name)["State"] == "stopped"
    assert "verb=idle-stop" in mark.new()
    # A stopped one has no deadline left; a start makes it idle again.
    assert sandboxd.start(MEMBER, name).ok
    wait_docker(name, "stopped", 30)


def test_on_idle_pause(stack, sandboxd, cleanup):
    name = create(sandboxd, cleanup, "idlepause", idle_timeout=2, on_idle="pause")
    assert props(sandboxd, name)["OnIdle"] == "pause"
    wait_docker(name, "paused", 30)
    assert props(sandboxd, name)["State"] == "paused"


def test_a_lease_and_a_running_exec_postpone_it(stack, sandboxd, cleanup):
    # 5 s: room for the exec's client to start after the lease's end on a busy machine.
    name = create(sandboxd, cleanup, "busy", idle_timeout=5)
    with holder(stack) as hd:
        hd.acquire(name).result
        time.sleep(7)                   # past the idle timeout: many ticks
        assert docker_state(name) == "running"
    # A running exec, streamed by a client of its own.
    p = stack.spawn_as(MEMBER, stack.client_argv("start-exec", name, '["sleep", "8"]', "{}"))
    try:
        time.sleep(6.5)
        assert docker_state(name) == "running"
        assert p.wait(timeout=30) == 0, p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
    wait_docker(name, "stopped", 30)


def test_expiry_deletes(stack, sandboxd, cleanup):
    mark = h.LogMark(stack)
    listener = h.Listener(stack, MEMBER)
    try:
        # 6 s: the properties are read before it expires on a busy machine too (the tick
        # is short here).
        name = create(sandboxd, cleanup, "expire", expire_after=6)
        p = props(sandboxd, name)
        assert p["CreatedAt"] + 6_000_000 == p["ExpiresAt"]
        with holder(stack) as hd:
            hd.acquire(name).result          # a lease does not hold off expiry
            wait_docker(name, None, 30)
            h.wait_until(lambda: hd.send("revoked", 0).result["revoked"], 10, what="lease revoked")
        listener.wait_for(lambda sigs: any(s["member"] == "SandboxRemoved" and s["args"][0] == name
                                           for s in sigs))
    finally:
        listener.close()
    assert name not in sandboxd.list(MEMBER)
    log = mark.new()
    assert "verb=expire" in log and f'sandbox="{name}"' in log


def test_an_overdue_deadline_is_acted_on_at_start_up(stack, sandboxd, cleanup):
    # The default tick here: the deadlines must fall due while no daemon runs, and a
    # short tick acts on one at once if the creates are slow.
    with h.daemon_argv(stack, stack.default_daemon_argv()):
        expiring = create(sandboxd, cleanup, "overdue-expire", expire_after=4)
        idle = create(sandboxd, cleanup, "overdue-idle", idle_timeout=4)
        stack.stop_daemon(signal.SIGKILL)
        time.sleep(8)
        # Nobody ran meanwhile: both still there.
        assert docker_state(expiring) == "running" and docker_state(idle) == "running"
        t0 = time.monotonic()
        assert sandboxd.call(OTHER, "GetPolicy").ok              # any call starts the daemon
        wait_docker(expiring, None, 30)
        wait_docker(idle, "stopped", 30)
        assert time.monotonic() - t0 < 30
    stack.set_daemon_command(TICK + stack.default_daemon_argv())     # the module's again


def test_the_idle_clock_survives_a_restart(stack, sandboxd, cleanup):
    name = create(sandboxd, cleanup, "clock", idle_timeout=20)
    # The margin that tells the clocks apart: the stop must come before 20 s from the
    # restart, which it does by as much as the sandbox had been idle before it.
    time.sleep(8)
    stack.stop_daemon(signal.SIGKILL)
    assert sandboxd.call(MEMBER, "GetPolicy").ok
    t0 = time.monotonic()
    wait_docker(name, "stopped", 40)
    # Not 20 s from the restart: the clock went on from the create.
    assert time.monotonic() - t0 < 18


def test_policy_bounds_and_default(stack, sandboxd, cleanup):
    with h.daemon_config(stack, {"max_idle_timeout": 10, "max_expire_after": 20, "default_idle_timeout": 3}):
        policy = sandboxd.call(MEMBER, "GetPolicy").result[0]
        assert (policy["max_idle_timeout"], policy["max_expire_after"], policy["default_idle_timeout"]) == (10, 20, 3)
        r = sandboxd.create(MEMBER, h.unique("over"), h.spec(), {"idle_timeout": ["u", 11]})
        assert "idle_timeout: 11 s is above the host policy's max_idle_timeout (10 s)" in r.error(h.POLICY_VIOLATION)
        r = sandboxd.create(MEMBER, h.unique("over"), h.spec(), {"expire_after": ["u", 21]})
        assert "max_expire_after (20 s)" in r.error(h.POLICY_VIOLATION)
        r = sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [h.unique("over"), h.spec(),
                                                                   {"idle_timeout": ["u", 11]}])
        assert "max_idle_timeout" in r.error(h.POLICY_VIOLATION)
        r = sandboxd.create(MEMBER, h.unique("bad"), h.spec(), {"on_idle": ["s", "sleep"]})
        assert "on_idle: 'sleep' is neither" in r.error(h.INVALID_ARGS)
        r = sandboxd.create(MEMBER, h.unique("bad"), h.spec(), {"idle_timeout": ["s", "10"]})
        assert "idle_timeout: expected an integer" in r.error(h.INVALID_ARGS)
        r = sandboxd.create(MEMBER, h.unique("bad"), h.spec(), {"ttl": ["u", 10]})
        assert "ttl: unknown option" in r.error(h.INVALID_ARGS)
        # Without the option: the policy's default.
        name = create(sandboxd, cleanup, "default")
        assert props(sandboxd, name)["IdleTimeout"] == 3
        wait_docker(name, "stopped", 30)
        # An explicit 0 is never.
        never = create(sandboxd, cleanup, "never", idle_timeout=0)
        assert props(sandboxd, never)["IdleTimeout"] == 0


def test_the_outsider_sees_no_lifetime(stack, sandboxd, cleanup):
    name = create(sandboxd, cleanup, "outsider", idle_timeout=600)
    sandboxd.call(OTHER, "Get", "ss", [h.SANDBOX, "IdleTimeout"], path=h.object_path(name, MEMBER),
                  iface=h.PROPERTIES).error(h.ACCESS_DENIED)


def test_a_pending_deadline_holds_off_the_idle_exit(stack, sandboxd, cleanup):
    argv = stack.default_daemon_argv()
    argv[argv.index("--idle-timeout") + 1] = "1"
    with h.daemon_argv(stack, TICK + argv):
        name = create(sandboxd, cleanup, "hold", expire_after=5)
        pid = stack.daemon_pid()
        time.sleep(2.5)
        assert stack.daemon_pid() == pid, "the daemon exited idle with a deadline to come"
        wait_docker(name, None, 30)
        h.wait_until(lambda: not stack.name_has_owner(h.BUS_NAME), 20, what="idle exit after the expiry")
    stack.set_daemon_command(TICK + stack.default_daemon_argv())     # the module's again


def test_ctl_lifetime_options(stack, sandboxd, cleanup):
    from test_lifetimes_leases import ctl_argv
    name = cleanup.sandbox(h.unique("ctl-idle"))
    r = stack.run_as(MEMBER, ctl_argv(stack, "create", name, "--image", h.TEST_IMAGE, "--idle-timeout", "2",
                                      "--on-idle", "pause", "--expire-after", "600"))
    assert r.returncode == 0, r.stderr
    p = props(sandboxd, name)
    assert (p["IdleTimeout"], p["OnIdle"], p["ExpiresAt"]) == (2, "pause", p["CreatedAt"] + 600_000_000)
    wait_docker(name, "paused", 30)
    gone = cleanup.sandbox(h.unique("ctl-expire"))
    r = stack.run_as(MEMBER, ctl_argv(stack, "ensure", gone, "--image", h.TEST_IMAGE, "--expire-after", "2"))
    assert r.returncode == 0 and "outcome: created" in r.stdout, r.stderr
    wait_docker(gone, None, 30)
    r = stack.run_as(MEMBER, ctl_argv(stack, "create", h.unique("x"), "--on-idle", "sleep"))
    assert r.returncode == 2 and "--on-idle: 'sleep' is neither stop nor pause" in r.stderr, r.stderr
    r = stack.run_as(MEMBER, ctl_argv(stack, "verify", name, "--idle-timeout", "2"))
    assert r.returncode == 2, r.stderr
