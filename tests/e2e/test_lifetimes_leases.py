# SPDX-License-Identifier: LGPL-2.1-or-later
"""Leases (issue 23, docs/lifecycle.md) through the real bus as the member and the outsider:
a lease (AcquireSandbox, Acquire) refuses another connection's stop, delete, pause and
ensure-replacement with SandboxBusy naming the count, the holder's own connection may
stop; closing the descriptor frees it (every copy: one passed to a child still holds);
option force revokes (LeaseRevoked to the holder, the pipe closed, Leases 0, audited);
a delete revokes; the outsider is refused; max_leases_per_user holds and closing frees;
a held lease keeps the daemon from its idle exit."""

import contextlib
import json
import os
import shutil
import signal
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

BUSY = h.ERR + "SandboxBusy"


class Holder:
    """tests/e2e/lease_holder.py as a user: one connection that holds leases."""

    def __init__(self, stack, user):
        self.stack = stack
        # Where the users can read it, next to client.py (which it imports).
        script = stack._path("lease_holder.py")
        shutil.copy(os.path.join(h.HERE, "lease_holder.py"), script)
        os.chmod(script, 0o644)
        self.proc = stack.spawn_as(user, ["/usr/bin/python3", script])
        ready = json.loads(self.proc.stdout.readline() or "{}")
        assert ready.get("ready"), self.proc.stderr.read()
        self.unique_name = ready["unique_name"]

    def send(self, *cmd):
        self.proc.stdin.write(json.dumps(list(cmd)) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read()
        return h.Reply(json.loads(line))

    def call(self, method, sig="", args=(), path=h.MANAGER_PATH, iface=h.MANAGER):
        return self.send("call", path, iface, method, sig, list(args))

    def acquire(self, name, owner=None):
        """By name on the Manager, or with owner through the sandbox's object."""
        if owner is None:
            return self.send("acquire", h.MANAGER_PATH, h.MANAGER, "AcquireSandbox", "sa{sv}", [name, {}])
        return self.send("acquire", h.object_path(name, owner), h.SANDBOX, "Acquire", "a{sv}", [{}])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=20)


@contextlib.contextmanager
def holder(stack, user=MEMBER):
    hd = Holder(stack, user)
    try:
        yield hd
    finally:
        if hd.proc.poll() is None:
            hd.close()


def props(sandboxd, name):
    return sandboxd.properties(MEMBER, name, owner=MEMBER).result[0]


def wait_leases(sandboxd, name, n):
    h.wait_until(lambda: props(sandboxd, name)["Leases"] == n, 10, what=f"Leases == {n}")


@pytest.fixture
def box(sandboxd, cleanup):
    name = h.unique("lease")
    sandboxd.create_ok(MEMBER, name, h.spec(), cleanup)
    return name


def test_a_lease_refuses_other_connections_and_closing_frees_it(stack, sandboxd, box):
    with holder(stack) as hd:
        before = props(sandboxd, box)
        assert before["Leases"] == 0 and before["LastActivity"] >= before["CreatedAt"]
        lease = hd.acquire(box).result
        assert props(sandboxd, box)["Leases"] == 1
        assert sandboxd.inspect(MEMBER, box).result[0]["leases"] == 1

        # Another connection of the member's: refused, naming the count.
        for r in (sandboxd.stop(MEMBER, box), sandboxd.stop(MEMBER, box, owner=MEMBER),
                  sandboxd.delete(MEMBER, box), sandboxd.delete(MEMBER, box, owner=MEMBER),
                  sandboxd.call(MEMBER, "PauseSandbox", "s", [box])):
            assert "1 lease held by another connection" in r.error(BUSY)
        # An ensure that would replace it likewise; one that reuses it is fine.
        other = h.spec(working_dir="/tmp")
        r = sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}",
                          [box, other, {"on_mismatch": ["s", "recreate"]}])
        assert "1 lease held by other connections" in r.error(BUSY)
        assert sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [box, h.spec(), {}]).result[2] == "reused"
        assert sandboxd.inspect(MEMBER, box).result[0]["state"] == "running"

        # A second lease, through the object: the count says two.
        hd.acquire(box, owner=MEMBER).result
        assert props(sandboxd, box)["Leases"] == 2
        assert "2 leases held by other connections" in sandboxd.stop(MEMBER, box).error(BUSY)

        # The holder's own connection may stop and start it.
        assert hd.call("StopSandbox", "sa{sv}", [box, {}]).ok
        assert props(sandboxd, box)["State"] == "stopped"
        assert hd.call("StartSandbox", "s", [box]).ok

        # Closing the descriptors ends the leases.
        hd.send("close", lease["lease"]).result
        wait_leases(sandboxd, box, 1)
        hd.send("close", 1).result
        wait_leases(sandboxd, box, 0)
        assert hd.send("signals").result["signals"] == []
        assert sandboxd.stop(MEMBER, box).ok


def test_an_inspection_from_what_is_kept_shows_the_leases_now(stack, sandboxd, box):
    """Reads back to back are answered from the kept description (issue 25); the
    lease count changes without any Docker event, so it is never taken from it."""
    with holder(stack) as hd:
        for _ in range(2):
            assert sandboxd.inspect(MEMBER, box).result[0]["leases"] == 0
        lease = hd.acquire(box).result
        seen = [sandboxd.inspect(MEMBER, box).result[0]["leases"] for _ in range(3)]
        assert seen == [1, 1, 1], seen
        hd.send("close", lease["lease"]).result
        wait_leases(sandboxd, box, 0)
        assert sandboxd.inspect(MEMBER, box).result[0]["leases"] == 0


def test_force_revokes_with_the_signal(stack, sandboxd, box):
    mark = h.LogMark(stack)
    with holder(stack) as hd:
        hd.acquire(box).result
        hd.acquire(box, owner=MEMBER).result
        assert not hd.send("revoked", 0).result["revoked"]
        assert sandboxd.stop(MEMBER, box, options={"force": ["b", True]}).ok
        assert props(sandboxd, box)["Leases"] == 0
        assert props(sandboxd, box)["State"] == "stopped"
        out = hd.send("revoked", 0).result
        assert out["revoked"] and hd.send("revoked", 1).result["revoked"]
        h.wait_until(lambda: len(hd.send("signals").result["signals"]) == 2, 10, what="two LeaseRevoked")
        for s in hd.send("signals").result["signals"]:
            assert s["path"] == h.object_path(box, MEMBER)
            assert "stop with option force" in s["reason"]
    log = mark.new()
    assert "verb=revoke-leases" in log and '2 leases revoked (stop with option force)' in log, log[-2000:]
    # Now a delete goes through.
    assert sandboxd.delete(MEMBER, box).ok


def test_force_on_a_replacing_ensure(stack, sandboxd, box):
    with holder(stack) as hd:
        hd.acquire(box).result
        r = sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}",
                          [box, h.spec(working_dir="/tmp"),
                           {"on_mismatch": ["s", "recreate"], "force": ["b", True]}])
        assert r.result[2] == "recreated"
        h.wait_until(lambda: hd.send("revoked", 0).result["revoked"], 10, what="the lease revoked")
        assert props(sandboxd, box)["Leases"] == 0
        assert len(hd.send("signals").result["signals"]) == 1


def test_a_delete_by_the_holder_revokes(stack, sandboxd, box):
    with holder(stack) as hd:
        hd.acquire(box).result
        assert hd.call("DeleteSandbox", "s", [box]).ok
        h.wait_until(lambda: hd.send("signals").result["signals"], 10, what="LeaseRevoked")
        assert hd.send("revoked", 0).result["revoked"]
        assert "removed" in hd.send("signals").result["signals"][0]["reason"]


def test_a_copy_in_another_process_still_holds(stack, sandboxd, box):
    with holder(stack) as hd:
        hd.acquire(box).result
        hd.send("spawn", 0).result
        hd.send("close", 0).result
        assert props(sandboxd, box)["Leases"] == 1
        sandboxd.stop(MEMBER, box).error(BUSY)
        hd.send("kill-children").result
        wait_leases(sandboxd, box, 0)


def test_the_outsider_is_refused(stack, sandboxd, box):
    with holder(stack, OTHER) as hd:
        hd.acquire(box, owner=MEMBER).error(*h.DENIED)
        hd.acquire(box).error(h.NO_SUCH_SANDBOX, *h.DENIED)
        sandboxd.call(OTHER, "Get", "ss", [h.SANDBOX, "Leases"], path=h.object_path(box, MEMBER),
                      iface=h.PROPERTIES).error(h.ACCESS_DENIED)
    assert props(sandboxd, box)["Leases"] == 0


def test_bad_options(stack, sandboxd, box):
    with holder(stack) as hd:
        r = hd.send("acquire", h.MANAGER_PATH, h.MANAGER, "AcquireSandbox", "sa{sv}", [box, {"ttl": ["u", 1]}])
        assert "ttl: unknown option" in r.error(h.INVALID_ARGS)
        hd.acquire(h.unique("absent")).error(h.NO_SUCH_SANDBOX)
    assert "force: expected a value of type 'b'" in sandboxd.stop(
        MEMBER, box, options={"force": ["u", 1]}).error(h.INVALID_ARGS)


def test_leases_are_announced(stack, sandboxd, box):
    listener = h.Listener(stack, MEMBER)
    try:
        with holder(stack) as hd:
            hd.acquire(box).result

            def changed(n):
                return lambda signals: any(
                    s["member"] == "PropertiesChanged" and s["path"] == h.object_path(box, MEMBER)
                    and s["args"][1].get("Leases") == n for s in signals)
            listener.wait_for(changed(1))
            hd.send("close", 0).result
            signals = listener.wait_for(changed(0))
        last = [s["args"][1] for s in signals if s["member"] == "PropertiesChanged"
                and "Leases" in s["args"][1]][-1]
        assert last["LastActivity"] >= props(sandboxd, box)["CreatedAt"]
    finally:
        listener.close()


def test_leases_end_with_the_service(stack, sandboxd, box):
    with holder(stack) as hd:
        hd.acquire(box).result
        stack.stop_daemon(signal.SIGKILL)
        assert hd.send("revoked", 0).result["revoked"]
        # A new daemon holds none; the holder was sent nothing.
        assert props(sandboxd, box)["Leases"] == 0
        assert sandboxd.stop(MEMBER, box).ok
        assert hd.send("signals").result["signals"] == []


def test_the_per_sandbox_cap(stack, sandboxd, box):
    with h.daemon_config(stack, {"max_leases_per_sandbox": 2}):
        with holder(stack) as hd, holder(stack) as hd2:
            hd.acquire(box).result
            hd2.acquire(box).result
            assert "max_leases_per_sandbox" in hd.acquire(box).error(h.LIMITS_EXCEEDED)
            assert "2 leases held by other connections" in sandboxd.stop(MEMBER, box).error(BUSY)
            # Each holder is blocked by the other's lease only.
            assert "1 lease held by another connection" in hd.call("StopSandbox", "sa{sv}", [box, {}]).error(BUSY)


def test_the_per_user_cap_holds_and_closing_frees(stack, sandboxd, box):
    with h.daemon_config(stack, {"max_leases_per_user": 3}):
        policy = sandboxd.call(MEMBER, "GetPolicy").result[0]
        assert policy["max_leases_per_user"] == 3 and policy["max_leases_per_sandbox"] == 64
        with holder(stack) as hd:
            for _ in range(3):
                hd.acquire(box).result
            for _ in range(20):
                assert "max_leases_per_user" in hd.acquire(box).error(h.LIMITS_EXCEEDED)
            # Another connection of the same user shares the cap.
            with holder(stack) as hd2:
                assert "max_leases_per_user" in hd2.acquire(box).error(h.LIMITS_EXCEEDED)
            assert props(sandboxd, box)["Leases"] == 3
            for i in range(3):
                hd.send("close", i).result
            wait_leases(sandboxd, box, 0)
            hd.acquire(box).result
        wait_leases(sandboxd, box, 0)


def test_a_lease_holds_off_the_idle_exit(stack, sandboxd, box):
    argv = stack.default_daemon_argv()
    argv[argv.index("--idle-timeout") + 1] = "1"
    with h.daemon_argv(stack, argv):
        with holder(stack) as hd:
            hd.acquire(box).result
            pid = stack.daemon_pid()
            time.sleep(3)
            assert stack.daemon_pid() == pid, "the daemon exited idle with a lease held"
            hd.send("close", 0).result
            h.wait_until(lambda: not stack.name_has_owner(h.BUS_NAME), 15, what="idle exit")


# ---- the CLI ------------------------------------------------------------------------------

def ctl_argv(stack, *args):
    return [os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl"), "--no-ask-password"] + list(args)


def test_ctl_acquire_holds_while_the_command_runs(stack, sandboxd, box):
    p = stack.spawn_as(MEMBER, ctl_argv(stack, "acquire", box, "--", "sh", "-c", "sleep 3; exit 7"))
    try:
        wait_leases(sandboxd, box, 1)
        assert "1 lease held by another connection" in sandboxd.stop(MEMBER, box).error(BUSY)
        r = stack.run_as(MEMBER, ctl_argv(stack, "delete", box))
        assert r.returncode == 1 and r.stderr.startswith("xagent-sandboxctl: " + BUSY), r.stderr
        assert p.wait(timeout=30) == 7, p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
    wait_leases(sandboxd, box, 0)
    assert sandboxd.stop(MEMBER, box).ok


def test_ctl_acquire_until_revoked_and_stop_force(stack, sandboxd, box):
    p = stack.spawn_as(MEMBER, ctl_argv(stack, "acquire", box))
    try:
        wait_leases(sandboxd, box, 1)
        assert p.poll() is None
        r = stack.run_as(MEMBER, ctl_argv(stack, "stop", "--force", box))
        assert r.returncode == 0, r.stderr
        assert p.wait(timeout=20) == 1
        assert "the lease on '%s' was revoked" % box in p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
    assert props(sandboxd, box)["State"] == "stopped"
    r = stack.run_as(MEMBER, ctl_argv(stack, "acquire", h.unique("absent")))
    assert r.returncode == 1 and h.NO_SUCH_SANDBOX in r.stderr, r.stderr
